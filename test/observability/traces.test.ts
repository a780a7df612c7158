import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/core/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { startFakeOpenAiServer, type ChatRequestBody, type FakeOpenAiServer } from '../kit/fake-openai-server.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.ts';

const PHONE = '+14165550188';
/** The caller's trace: a webhook delivered through a traced proxy. */
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;

/** The model: a tool call for the participant's message, then a reply; a plain reply to anything else. */
function script(body: ChatRequestBody) {
  const messages = body.messages as Array<{ role: string; content?: string }>;
  const last = messages.at(-1);
  if (last?.role === 'user' && last.content?.includes('walk more'))
    return {
      toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'walking' } }],
      usage: { prompt_tokens: 120, completion_tokens: 12 },
    };
  return { text: 'Noted, walking it is.', usage: { prompt_tokens: 150, completion_tokens: 7 } };
}

let receiver: OtlpReceiver;
let model: FakeOpenAiServer;
let server: RunningServer;
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  receiver = await new OtlpReceiver().start();
  model = await startFakeOpenAiServer((body) => script(body));
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: tempSqliteUrl(),
    RATE_LIMITS: 'off',
    LLM_BASE_URL: model.baseUrl,
    LLM_MODEL: 'fake-model',
    LLM_MAX_RETRIES: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=abc%20def',
    OTEL_SERVICE_NAME: 'promptpipe-test',
  });
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      callback();
    },
  });
  server = await startServer(config, createLogger({ level: 'info', redact: true, destination }));
});
afterAll(async () => {
  await server?.close();
  await model?.close();
  await receiver?.close();
});

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
};

describe('OpenTelemetry traces (OTLP/HTTP to a local receiver)', () => {
  let spans: ReceivedSpan[];
  let participantId: string;
  let turns: any[];

  beforeAll(async () => {
    const enrolled = await post('/conversation/participants', { phone_number: PHONE, name: 'Ada' });
    expect(enrolled.status).toBe(201);
    participantId = enrolled.body.result.id;
    await server.settle();
    const inbound = await post(
      '/conversation/inbound',
      { from: PHONE, text: 'I want to walk more', message_id: 'm1' },
      { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    );
    expect(inbound.status).toBe(202);
    await server.settle();
    const listed = await fetch(`${server.url}/conversation/participants/${participantId}/turns`);
    turns = ((await listed.json()) as any).result;
    // Closing flushes every buffered span to the receiver (and waits for it to answer).
    await server.close();
    spans = receiver.spans;
  });

  const inTrace = () => spans.filter((span) => span.traceId === CALLER_TRACE);
  const one = (found: ReceivedSpan[], what: string) => {
    expect(found, what).toHaveLength(1);
    return found[0]!;
  };

  it('posts JSON to /v1/traces with the configured headers and service name', () => {
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      expect(request.path).toBe('/v1/traces');
      expect(request.contentType).toBe('application/json');
      expect(request.headers['x-collector-key']).toBe('abc def');
    }
    expect(new Set(spans.map((span) => span.resource['service.name']))).toEqual(new Set(['promptpipe-test']));
    expect(new Set(spans.map((span) => span.scope))).toEqual(new Set(['promptpipe']));
  });

  it('a span per inbound request, continuing the caller’s trace', () => {
    const request = one(
      inTrace().filter((span) => span.kind === SERVER),
      'the inbound request span',
    );
    expect(request.name).toBe('POST /conversation/inbound');
    expect(request.parentSpanId).toBe(CALLER_SPAN);
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/conversation/inbound',
      'url.path': '/conversation/inbound',
      'http.response.status_code': 202,
    });
    // Every request gets one; the enrolment started a trace of its own.
    const enrol = spans.find((span) => span.name === 'POST /conversation/participants');
    expect(enrol?.traceId).not.toBe(CALLER_TRACE);
    expect(enrol?.parentSpanId).toBeUndefined();
  });

  it('the turn its message started is in that trace, under the request, with conversation, flow and trigger', () => {
    const request = inTrace().find((span) => span.kind === SERVER)!;
    const turn = one(
      inTrace().filter((span) => span.name.startsWith('turn')),
      'the message turn',
    );
    expect(turn.name).toBe('turn habit-coach');
    expect(turn.parentSpanId).toBe(request.spanId);
    const conversationId = turn.attributes['promptpipe.conversation.id'];
    expect(conversationId).toMatch(/^conv_/);
    expect(turn.attributes).toMatchObject({
      'gen_ai.conversation.id': conversationId,
      'promptpipe.flow': 'habit-coach',
      'promptpipe.turn.trigger': 'message',
      'promptpipe.turn.status': 'completed',
    });
    // The greeting was a turn too, in the enrolment's trace, triggered otherwise.
    const greeting = spans.find((span) => span.name === 'turn habit-coach' && span.traceId !== CALLER_TRACE);
    expect(greeting?.attributes['promptpipe.turn.trigger']).toBe('greeting');
  });

  it('a span per model call with the GenAI attributes: model, token usage, finish reason', () => {
    const turn = inTrace().find((span) => span.name.startsWith('turn'))!;
    const calls = inTrace().filter((span) => span.attributes['gen_ai.operation.name'] === 'chat');
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.name).toBe('chat fake-model');
      expect(call.kind).toBe(CLIENT);
      expect(call.parentSpanId).toBe(turn.spanId);
      expect(call.attributes).toMatchObject({
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'fake-model',
        'gen_ai.response.model': 'fake-model',
      });
    }
    const [toolCall, reply] = calls;
    expect(toolCall!.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 12,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });
    expect(reply!.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 150,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.response.finish_reasons': ['stop'],
    });
  });

  it('a span per tool call, under the turn', () => {
    const turn = inTrace().find((span) => span.name.startsWith('turn'))!;
    const tool = one(
      inTrace().filter((span) => span.attributes['gen_ai.operation.name'] === 'execute_tool'),
      'the tool call',
    );
    expect(tool.name).toBe('execute_tool save_user_profile');
    expect(tool.parentSpanId).toBe(turn.spanId);
    expect(tool.attributes).toMatchObject({ 'gen_ai.tool.name': 'save_user_profile', 'promptpipe.tool.status': 'ok' });
    expect(tool.attributes['gen_ai.tool.call.id']).toEqual(expect.any(String));
  });

  it('a span per delivery: the reply went out in the turn’s trace', () => {
    const delivery = one(
      inTrace().filter((span) => span.name === 'deliver webhook'),
      'the reply’s delivery',
    );
    expect(delivery.kind).toBe(PRODUCER);
    expect(delivery.attributes).toMatchObject({
      'promptpipe.channel': 'webhook',
      'messaging.operation.type': 'send',
      'promptpipe.delivery.attempt': 1,
    });
    expect(delivery.attributes['messaging.message.id']).toEqual(expect.any(String));
    expect(delivery.status.code ?? 0).not.toBe(2);
  });

  it('the trace id is in the turn record and in the log lines written inside it', () => {
    const byTrigger = Object.fromEntries(turns.map((turn) => [turn.trigger, turn]));
    expect(byTrigger.message.trace_id).toBe(CALLER_TRACE);
    const greetingSpan = spans.find((span) => span.name === 'turn habit-coach' && span.traceId !== CALLER_TRACE)!;
    expect(byTrigger.greeting.trace_id).toBe(greetingSpan.traceId);
    // The webhook channel without a URL logs each reply: inside its delivery span.
    const delivery = inTrace().find((span) => span.name === 'deliver webhook')!;
    const logged = logLines.filter((line) => line.msg === 'outbound message (no OUTBOUND_WEBHOOK_URL set)');
    expect(logged.length).toBeGreaterThanOrEqual(2);
    expect(logged.map((line) => [line.trace_id, line.span_id])).toContainEqual([CALLER_TRACE, delivery.spanId]);
    // Outside any span (start-up) a line carries none.
    const listening = logLines.find((line) => line.msg === 'PromptPipe is listening');
    expect(listening).toBeDefined();
    expect(listening).not.toHaveProperty('trace_id');
  });
});
