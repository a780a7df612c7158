import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/core/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { startFakeOpenAiServer, type ChatRequestBody } from '../kit/fake-openai-server.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { OtlpReceiver } from './otlp-receiver.ts';

const PHONE = '+14165550189';
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

/** The model answers at once, except the message below, which it keeps waiting until `gate.open`. */
const gate = { open: false, waiting: false };
async function script(body: ChatRequestBody) {
  const said = JSON.stringify(body.messages);
  if (said.includes('answer me after the restart') && !gate.open) {
    gate.waiting = true;
    while (!gate.open) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { text: 'Here I am.' };
}

const receiver = await new OtlpReceiver().start();
const model = await startFakeOpenAiServer((body) => script(body));
const url = tempSqliteUrl();
const running: RunningServer[] = [];
afterAll(async () => {
  gate.open = true;
  for (const server of running) await server.close();
  await model.close();
  await receiver.close();
});

async function start(): Promise<RunningServer> {
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: url,
    RATE_LIMITS: 'off',
    LLM_BASE_URL: model.baseUrl,
    LLM_MODEL: 'fake-model',
    LLM_MAX_RETRIES: '0',
    SHUTDOWN_TIMEOUT_MS: '100',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  });
  const server = await startServer(config, createLogger({ level: 'silent', redact: true }));
  running.push(server);
  return server;
}

const post = async (server: RunningServer, path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
};

it("a message answered after a restart is in its caller's trace, under the request that brought it", async () => {
  const first = await start();
  expect((await post(first, '/conversation/participants', { phone_number: PHONE })).status).toBe(201);
  await first.settle();
  const inbound = await post(
    first,
    '/conversation/inbound',
    { from: PHONE, text: 'answer me after the restart', message_id: 'r1' },
    { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
  );
  expect(inbound.status).toBe(202);
  await waitFor(() => gate.waiting, { what: 'the turn waiting for the model' });
  await first.close(); // the turn is abandoned; the message stays pending

  gate.open = true;
  const second = await start();
  await waitFor(async () => (await second.store.getInbox(inbound.body.result.inbox_id))?.status === 'processed', {
    what: 'the message answered by the second server',
  });
  await second.close(); // flushes its spans

  const inTrace = receiver.spans.filter((span) => span.traceId === CALLER_TRACE);
  const request = inTrace.find((span) => span.name === 'POST /conversation/inbound')!;
  expect(request.parentSpanId).toBe(CALLER_SPAN);
  const answered = inTrace.filter(
    (span) => span.name.startsWith('turn') && span.attributes['promptpipe.turn.status'] === 'completed',
  );
  expect(answered).toHaveLength(1);
  expect(answered[0]!.parentSpanId).toBe(request.spanId);
  expect(answered[0]!.attributes['promptpipe.inbox.id']).toBe(inbound.body.result.inbox_id);
}, 30_000);
