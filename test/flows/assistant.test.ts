import { afterEach, describe, expect, it } from 'vitest';
import { ASSISTANT_APOLOGY, CONTINUE_AFTER_THINKING } from '../../src/flows/assistant/agentic-loop.ts';
import type { VirtualClock } from '../../src/timers/virtual-clock.ts';
import { lastUser, startAssistant } from './assistant-kit.ts';

// The assistant flow (spec 003, issue #10) over HTTP and WebSocket, against a scripted model
// that records what it was asked.
let session: Awaited<ReturnType<typeof startAssistant>> | undefined;
afterEach(async () => {
  await session?.server.close();
  session = undefined;
});
const start = async (...args: Parameters<typeof startAssistant>) => (session = await startAssistant(...args));
const contentOf = (messages: Array<{ content: string }>) => messages.map((m) => m.content).join('\n');

describe('assistant: redaction', () => {
  const secrets = {
    email: 'jane.doe@example.com',
    card: '4111 1111 1111 1111',
    token: 'sk-proj-abcdefghijklmnop1234',
    password: 'hunter2!',
    jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    hex: 'd41d8cd98f00b204e9800998ecf8427e',
    code: '482913',
  };
  const message =
    `mail ${secrets.email} card ${secrets.card} key ${secrets.token} password=${secrets.password} ` +
    `jwt ${secrets.jwt} sha ${secrets.hex} my verification code is ${secrets.code}`;

  it(
    'removes every kind before the router, the recall extractor and the loop see the text, and before it is ' +
      'stored',
    async () => {
      const { say, requests, server, id, lastTurn } = await start({ reply: () => ({ text: 'Noted.' }) });
      await say(message);
      const seen = [...requests('route'), ...requests('recall'), ...requests('reply')]
        .map((request) => contentOf(request.messages))
        .join('\n');
      expect(requests('route')).toHaveLength(1);
      expect(requests('recall')).toHaveLength(1);
      for (const secret of Object.values(secrets)) expect(seen).not.toContain(secret);
      for (const label of [
        '[email]',
        '[card]',
        '[api-token]',
        'password=[secret]',
        '[jwt]',
        '[hex]',
        '[one-time-code]',
      ])
        expect(seen).toContain(label);

      const stored = (await server.store.listMessages(id)).filter((m) => m.role === 'user').at(-1)!;
      for (const secret of Object.values(secrets)) expect(stored.text).not.toContain(secret);
      const turn = await lastTurn();
      const inbox = await server.store.getInbox(turn.inboxId!);
      expect(inbox!.text).toBe(stored.text);
    },
  );

  it("stores a paused participant's message redacted too (no turn runs, the text is kept)", async () => {
    const { server } = await start({ reply: () => ({ text: 'Hi.' }) });
    const enrolled = await server.request('POST', '/conversation/participants', {
      phone_number: '+14165550190',
      flow: 'assistant',
    });
    const participantId = enrolled.body.result.id as string;
    await server.engine.idle();
    expect(
      (await server.request('PUT', `/conversation/participants/${participantId}`, { status: 'paused' })).status,
    ).toBe(200);
    await server.request('POST', '/conversation/inbound', {
      from: '+14165550190',
      text: `reach me at ${secrets.email}, DB_PASSWORD=${secrets.password}`,
    });
    await server.engine.idle();
    const conversation = (await server.store.findConversationByParticipant(participantId))!;
    const last = (await server.store.listMessages(conversation.id)).at(-1)!;
    expect(last.text).toBe('reach me at [email], DB_PASSWORD=[secret]');
  });

  it('redacts a voice partial transcript before it enters the event log', async () => {
    const { server, id } = await start({ reply: () => ({ text: 'Hi.' }) });
    const sent = await server.request('POST', `/api/conversations/${id}/message`, {
      type: 'partial_transcript',
      text: `my mail is ${secrets.email} card ${secrets.card}`,
    });
    expect(sent.status).toBe(200);
    const replay = await server.request('POST', `/api/conversations/${id}/resync`, { lastEventId: 0 });
    const partial = (replay.body.result.events as Array<{ text?: string; data?: { phase?: string } }>).find(
      (event) => event.data?.phase === 'partial_transcript',
    );
    expect(partial?.text).toBe('my mail is [email] card [card]');
  });

  it('cuts a very long message at 8,000 characters and tells the model so', async () => {
    const { say, requests } = await start({ reply: () => ({ text: 'That is long.' }) });
    await say('word '.repeat(3000));
    const user = requests('reply')[0]!.messages.at(-1)!.content;
    expect(user).toMatch(
      /^(word ){1599}word \[Note: the message was longer than 8,000 characters and was cut here\.\]$/,
    );
  });
});

describe('assistant: profiles', () => {
  it("routes to the profile the router names, and records it as the turn's module", async () => {
    const { say, requests, lastTurn } = await start({
      route: () => ({ text: 'I would pick developer for this.' }),
      reply: () => ({ text: 'Check your tsconfig.' }),
    });
    await say('why does my build fail?');
    expect(requests('route')[0]!.messages[0]!.content).toMatch(/- business: .*\n- developer: .*\n- life: /s);
    expect(requests('reply')[0]!.messages[0]!.content).toContain('assistant for a software developer');
    expect((await lastTurn()).module).toBe('developer');
  });

  it('falls back to the default profile when routing fails, without failing the turn', async () => {
    const { say, requests, lastTurn } = await start({
      route: () => ({ error: new Error('router down') }),
      reply: () => ({ text: 'Sure.' }),
    });
    expect(await say('plan my weekend')).toBe('Sure.');
    expect(requests('reply')[0]!.messages[0]!.content).toContain('warm, down-to-earth personal assistant');
    expect(await lastTurn()).toMatchObject({ module: 'life', status: 'completed' });
  });
});

describe('assistant: memory', () => {
  it('sends the last 5 minutes of dialogue as prior messages, and nothing older', async () => {
    const { say, advance, requests } = await start({
      reply: (request) => ({ text: `ok ${request.messages.at(-1)!.content}` }),
    });
    await say('first');
    await advance('3m');
    await say('second');
    expect(
      requests('reply')[1]!
        .messages.slice(1)
        .map((m) => `${m.role}:${m.content}`),
    ).toEqual(['assistant:Hello!', 'user:first', 'assistant:ok first', 'user:second']);
    await advance('6m');
    await say('third');
    expect(
      requests('reply')[2]!
        .messages.slice(1)
        .map((m) => m.content),
    ).toEqual(['third']);
  });

  it('caps the recent dialogue by count', async () => {
    const { say, requests } = await start(
      { reply: (request) => ({ text: `ok ${request.messages.at(-1)!.content}` }) },
      { ASSISTANT_RECENT_MAX_MESSAGES: '2' },
    );
    await say('one');
    await say('two');
    await say('three');
    expect(
      requests('reply')[2]!
        .messages.slice(1)
        .map((m) => m.content),
    ).toEqual(['two', 'ok two', 'three']);
  });

  it(
    'recalls earlier conversation by keywords into the system message, with time bounds applied before the ' + 'limit',
    async () => {
      const recall = { text: '' };
      const { say, advance, requests, lastTurn, auditOf } = await start(
        { recall: () => recall, reply: () => ({ text: 'Got it.' }) },
        { ASSISTANT_RECALL_MAX_RESULTS: '1' },
      );
      await say('My dentist appointment is on Friday');
      await advance('2d');
      await say('The dentist moved it to Monday');
      await advance('1h');
      recall.text = '{"keywords": ["dentist"], "from": "2026-11-23T00:00:00Z", "to": "2026-11-23T23:59:59Z"}';
      await say('When was the dentist again, from what I said on the first day?');
      const system = requests('reply').at(-1)!.messages[0]!.content;
      expect(system).toMatch(
        /Relevant conversation history:\n- \[2026-11-23 10:00 UTC\] User: My dentist appointment is on Friday$/m,
      );
      expect(system).not.toContain('Monday');
      recall.text = '```json\n{"keywords": ["dentist", "Monday"]}\n```';
      await say('and what did I say about the dentist?');
      expect(requests('reply').at(-1)!.messages[0]!.content).toContain('User: The dentist moved it to Monday');
      expect((await auditOf((await lastTurn()).id)).find((call) => call.name === 'recall_memory')!.result).toBe(
        '1 message(s) recalled: 1 by text',
      );
    },
  );

  it('tries the extraction twice, then goes on without recall', async () => {
    const { say, requests } = await start({
      recall: () => ({ text: 'sorry, no JSON today' }),
      reply: () => ({ text: 'Hi.' }),
    });
    expect(await say('remember the dentist?')).toBe('Hi.');
    expect(requests('recall')).toHaveLength(2);
    expect(requests('reply')[0]!.messages[0]!.content).not.toContain('Relevant conversation history');
  });

  it('does not recall for a profile without the recall tool', async () => {
    const { say, requests } = await start({
      route: () => ({ text: 'business' }),
      recall: () => ({ text: '{"keywords": ["budget"]}' }),
      reply: () => ({ text: 'Here.' }),
    });
    await say('what did I say about the budget?');
    expect(requests('recall')).toHaveLength(0);
    expect(requests('reply')[0]!.tools!.map((tool) => tool.name)).not.toContain('recall_conversation');
  });
});

describe('assistant: the agentic loop', () => {
  it(
    'gives every call exactly one fresh context block, inside the only system message, and after 8 calls ' +
      'answers from the results in one call without tools',
    async () => {
      const virtual: { clock?: VirtualClock } = {};
      const { say, requests, lastTurn, server } = await start(
        {
          reply: (request, index) => {
            // Each call happens a minute after the previous one: the block must say so.
            virtual.clock!.set(new Date(virtual.clock!.now().getTime() + 60_000));
            if (!request.tools) return { text: 'I checked the time eight times; the last was 10:08 UTC.' };
            return {
              toolCalls: [{ name: 'current_time', arguments: { timeZone: index % 2 ? 'UTC' : 'Europe/Lisbon' } }],
            };
          },
        },
        { ASSISTANT_LOCATION: 'Lisbon, Portugal' },
      );
      virtual.clock = server.clock as VirtualClock;
      expect(await say('count for me')).toBe('I checked the time eight times; the last was 10:08 UTC.');
      const calls = requests('reply');
      expect(calls).toHaveLength(9);
      // The last call offers no tools and carries the results as text: no provider refuses it.
      expect(calls[8]!.tools).toBeUndefined();
      expect(calls[8]!.messages.some((m) => m.role === 'tool')).toBe(false);
      expect(contentOf(calls[8]!.messages)).toContain('Tool result: ');
      calls.forEach((request, index) => {
        expect(request.messages.filter((m) => m.role === 'system')).toHaveLength(1);
        expect(request.messages[0]!.content.match(/Current context:/g)).toHaveLength(1);
        expect(request.messages[0]!.content).toContain(
          `Current context:\n• Time: Monday, November 23, 2026 at 10:0${index} UTC\n• Location: Lisbon, Portugal`,
        );
        expect(contentOf(request.messages.slice(1))).not.toContain('Current context');
      });
      expect(await lastTurn()).toMatchObject({ modelCalls: 9, status: 'completed' });
    },
  );

  it('runs every tool call of a response, each answered once with its id; string-encoded arguments work', async () => {
    const { say, requests, server, id } = await start({
      reply: (_request, index) =>
        index === 0
          ? {
              toolCalls: [
                { name: 'calculator', id: 'a', arguments: JSON.stringify(JSON.stringify({ expression: '6 * 7' })) },
                { name: 'add_note', id: 'b', arguments: { text: 'buy oat milk' } },
              ],
            }
          : { text: 'Done: 42, and noted.' },
    });
    expect(await say('what is 6*7, and note oat milk')).toBe('Done: 42, and noted.');
    const tools = requests('reply')[1]!.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => [m.toolCallId, m.content])).toEqual([
      ['a', '6 * 7 = 42'],
      ['b', expect.stringMatching(/^Saved note note_/)],
    ]);
    expect((await server.store.listNotes({ conversationId: id, person: null })).map((note) => note.text)).toEqual([
      'buy oat milk',
    ]);
  });

  it("refuses a tool outside the profile's allowlist and tells the model what is available", async () => {
    const { say, requests, server, id } = await start({
      route: () => ({ text: 'business' }),
      reply: (_request, index) =>
        index === 0
          ? {
              toolCalls: [
                { name: 'recall_conversation', arguments: { keywords: ['budget'] } },
                { name: 'shell', arguments: { command: 'ls' } },
              ],
            }
          : { text: 'I cannot look that up.' },
    });
    await say('look up the budget');
    const results = requests('reply')[1]!
      .messages.filter((m) => m.role === 'tool')
      .map((m) => m.content);
    const available = 'Available tools: current_time, calculator, add_note, list_notes, delete_note';
    for (const result of results)
      expect(result).toMatch(new RegExp(String.raw`^Error: the tool "\w+" is not available here\. ${available}\.$`));
    const audit = await server.store.listToolCalls(id);
    expect(
      audit.filter((call) => call.name === 'recall_conversation' || call.name === 'shell').map((call) => call.status),
    ).toEqual(['error', 'error']);
  });

  it(
    'suppresses a repeated identical call (argument keys in another order) and tells the model to reuse the ' +
      'result',
    async () => {
      const first = { keywords: ['dentist'], from: '2026-11-01T00:00:00Z' };
      const again = { from: '2026-11-01T00:00:00Z', keywords: ['dentist'] };
      const { say, requests } = await start({
        reply: (_request, index) =>
          [
            { toolCalls: [{ name: 'recall_conversation', arguments: first }] },
            { toolCalls: [{ name: 'recall_conversation', arguments: again }] },
            { text: 'Nothing about the dentist.' },
          ][index]!,
      });
      await say('dentist?');
      const results = requests('reply')[2]!
        .messages.filter((m) => m.role === 'tool')
        .map((m) => m.content);
      expect(results).toEqual([
        'No earlier messages match.',
        'Not run again: this exact call was already made. Reuse its result:\nNo earlier messages match.',
      ]);
    },
  );

  it('caps how often one tool runs per reply', async () => {
    const { say, requests } = await start({
      reply: (_request, index) =>
        index < 4
          ? { toolCalls: [{ name: 'calculator', arguments: { expression: `${index} * 2` } }] }
          : { text: 'Enough.' },
    });
    await say('double things');
    const results = requests('reply')[4]!
      .messages.filter((m) => m.role === 'tool')
      .map((m) => m.content);
    expect(results.slice(0, 3)).toEqual(['0 * 2 = 0', '1 * 2 = 2', '2 * 2 = 4']);
    expect(results[3]).toMatch(/^Error: calculator already ran 3 times/);
  });

  it('counts successful runs towards the cap (failed ones only towards a looser one), in a response too', async () => {
    const bad = { name: 'calculator', arguments: { expression: '2 +' } };
    const { say, requests } = await start({
      reply: (_request, index) =>
        [
          { toolCalls: [bad] },
          { toolCalls: [{ ...bad, arguments: { expression: '2 * ' } }] },
          { toolCalls: [{ ...bad, arguments: { expression: '(2' } }] },
          { toolCalls: [1, 2, 3, 4, 5].map((n) => ({ name: 'calculator', arguments: { expression: `${n} + ${n}` } })) },
          { text: 'Sums done.' },
        ][index]!,
    });
    expect(await say('add things')).toBe('Sums done.');
    const results = requests('reply')[4]!
      .messages.filter((m) => m.role === 'tool')
      .map((m) => m.content);
    expect(results.slice(0, 3)).toEqual([
      expect.stringMatching(/^Error: /),
      expect.stringMatching(/^Error: /),
      expect.stringMatching(/^Error: /),
    ]);
    // Three failures did not use up the cap; three successes did, even inside one response.
    expect(results.slice(3, 6)).toEqual(['1 + 1 = 2', '2 + 2 = 4', '3 + 3 = 6']);
    expect(results.slice(6)).toEqual([
      expect.stringMatching(/^Error: calculator already ran 3 times/),
      expect.stringMatching(/^Error: calculator already ran 3 times/),
    ]);
  });

  it(
    'runs at most LLM_MAX_TOOL_CALLS_PER_RESPONSE calls of a response and LLM_MAX_TOOL_CALLS_PER_TURN of a ' +
      'reply; the rest get an error result',
    async () => {
      const notes = (round: number) => ({
        toolCalls: Array.from({ length: 50 }, (_, n) => ({
          name: 'add_note',
          id: `r${round}_${n}`,
          arguments: { text: `note ${round}.${n}` },
        })),
      });
      const { say, requests, server, id, lastTurn, auditOf } = await start(
        { reply: (_request, index) => (index < 2 ? notes(index + 1) : { text: 'Noted what I could.' }) },
        { LLM_MAX_TOOL_CALLS_PER_RESPONSE: '2', LLM_MAX_TOOL_CALLS_PER_TURN: '3' },
      );
      expect(await say('note fifty things, twice')).toBe('Noted what I could.');
      expect(
        (await server.store.listNotes({ conversationId: id, person: null })).map((note) => note.text).sort(),
      ).toEqual(['note 1.0', 'note 1.1', 'note 2.0']);

      const answered = (call: number) => {
        const messages = requests('reply')[call]!.messages;
        const asked = messages.filter((m) => m.role === 'assistant' && m.toolCalls).at(-1)!;
        const results = messages.slice(messages.indexOf(asked) + 1).filter((m) => m.role === 'tool');
        expect(results.map((m) => m.toolCallId)).toEqual(
          asked.role === 'assistant' ? asked.toolCalls?.map((c) => c.id) : [],
        );
        return results.map((m) => m.content);
      };
      const perResponse = /^Error: too many tool calls in one response; at most 2 are run/;
      const first = answered(1);
      expect(first.slice(0, 2)).toEqual([expect.stringMatching(/^Saved note/), expect.stringMatching(/^Saved note/)]);
      expect(first.slice(2).filter((result) => perResponse.test(result))).toHaveLength(48);
      const second = answered(2);
      expect(second[0]).toMatch(/^Saved note/);
      expect(second[1]).toMatch(/^Error: too many tool calls in this turn; at most 3 are run/);
      expect(second.slice(2).filter((result) => perResponse.test(result))).toHaveLength(48);
      const audit = await auditOf((await lastTurn()).id);
      expect(audit.filter((call) => call.name === 'add_note' && call.status === 'ok')).toHaveLength(3);
      expect(audit.filter((call) => /too many tool calls/.test(call.result))).toHaveLength(97);
    },
  );

  it('gives repeated or empty tool-call ids unique ones, so each result answers exactly one call', async () => {
    const { say, requests } = await start({
      reply: (_request, index) =>
        index === 0
          ? {
              toolCalls: [
                { name: 'calculator', id: 'call_0', arguments: { expression: '1+1' } },
                { name: 'calculator', id: 'call_0', arguments: { expression: '2+2' } },
                { name: 'current_time', id: '', arguments: {} },
              ],
            }
          : { text: 'Done.' },
    });
    await say('two sums and the time');
    const next = requests('reply')[1]!.messages;
    const assistant = next.find((m) => m.role === 'assistant' && 'toolCalls' in m && m.toolCalls) as Extract<
      (typeof next)[number],
      { role: 'assistant' }
    >;
    const proposed = assistant.toolCalls!.map((call) => call.id);
    const answered = next.filter((m) => m.role === 'tool').map((m) => m.toolCallId);
    expect(new Set(proposed).size).toBe(3);
    expect(answered).toEqual(proposed);
    expect(proposed[0]).toBe('call_0');
  });

  it('keeps what the model said beside its tool calls when nothing comes after, and streams it as stored', async () => {
    const steps = [
      { text: 'The answer is 42.', toolCalls: [{ name: 'current_time', arguments: {} }] },
      { text: '' },
      { text: '' },
    ];
    const { say } = await start({ reply: (_request, index) => steps[index]! });
    expect(await say('the answer?')).toBe('The answer is 42.');
  });

  it('joins the text of every round into the reply, streamed as stored', async () => {
    const steps = [
      { text: 'Checking…', toolCalls: [{ name: 'current_time', arguments: { timeZone: 'UTC' } }] },
      { text: 'It is ten.' },
    ];
    const { say, client } = await start({ reply: (_request, index) => steps[index]! });
    expect(await say('time?')).toBe('Checking…\n\nIt is ten.');
    const streamed = client
      .of('token')
      .map((event) => (event as { text: string }).text)
      .join('');
    expect(streamed.endsWith('Checking…\n\nIt is ten.')).toBe(true);
  });

  it('asks its last allowed call for an answer from the results in hand', async () => {
    const { say, requests } = await start({
      reply: (request, index) =>
        lastUser(request).startsWith('Answer my request now')
          ? { text: 'Here is what I found: 1, 2 and 3.' }
          : { toolCalls: [{ name: 'current_time', arguments: { timeZone: index % 2 ? 'UTC' : 'Europe/Paris' } }] },
    });
    expect(await say('keep checking')).toBe('Here is what I found: 1, 2 and 3.');
    const calls = requests('reply');
    expect(calls).toHaveLength(8);
    // Tools stay declared (providers refuse tool history without them); only the last call gets the note.
    expect(calls.every((request) => request.tools)).toBe(true);
    expect(calls.slice(0, 7).some((request) => lastUser(request).startsWith('Answer my request now'))).toBe(false);
    expect(calls[7]!.messages.at(-1)).toEqual({
      role: 'user',
      content: expect.stringMatching(/^Answer my request now, using the tool results above/),
    });
  });

  it('keeps a developer answer that opens with a JSON code block, and streams it', async () => {
    const answer = '```json\n{"compilerOptions": {"strict": true}}\n```\nThis turns on strict mode.';
    const { say, client } = await start({ route: () => ({ text: 'developer' }), reply: () => ({ text: answer }) });
    expect(await say('how do I enable strict mode?')).toBe(answer);
    expect(
      client
        .of('token')
        .map((event) => (event as { text: string }).text)
        .join(''),
    ).toContain('"strict": true');
  });

  it('continues after a thinking-only response', async () => {
    const { say, requests, lastTurn } = await start({
      reply: (_request, index) =>
        index === 0 ? { reasoning: 'The user wants a greeting.' } : { text: 'Hello there.' },
    });
    expect(await say('hi')).toBe('Hello there.');
    expect(requests('reply')).toHaveLength(2);
    expect(contentOf(requests('reply')[1]!.messages)).not.toContain('The user wants a greeting');
    expect(requests('reply')[1]!.messages.at(-1)).toEqual({ role: 'user', content: CONTINUE_AFTER_THINKING });
    expect((await lastTurn()).modelCalls).toBe(2);
  });

  it('nudges once for an answer after tool results, and an empty reply becomes the apology', async () => {
    const steps = [
      { toolCalls: [{ name: 'current_time', arguments: {} }] },
      { text: '' },
      { text: "It is ten o'clock." },
      { text: '' },
    ];
    const { say, requests } = await start({ reply: (_request, index) => steps[index]! });
    expect(await say('what time is it?')).toBe("It is ten o'clock.");
    expect(requests('reply')[2]!.messages.at(-1)).toEqual({
      role: 'user',
      content: expect.stringMatching(/^Answer my request now, using the tool results above/),
    });
    expect(await say('and again?')).toBe(ASSISTANT_APOLOGY);
  });

  it('strips tool-protocol marker lines from the reply, and never streams them', async () => {
    const { say, client } = await start({
      reply: () => ({ text: 'TOOL_CALL: list_notes {}\nYou have no notes yet.' }),
    });
    expect(await say('my notes?')).toBe('You have no notes yet.');
    const streamed = client
      .of('token')
      .map((event) => (event as { text: string }).text)
      .join('');
    expect(streamed).toContain('You have no notes yet.');
    expect(streamed).not.toContain('TOOL_CALL');
  });

  it('compares a call only with the last 5 successful ones', async () => {
    const first = { name: 'recall_conversation', arguments: { keywords: ['milk'] } };
    const between = [
      { name: 'current_time', arguments: {} },
      { name: 'calculator', arguments: { expression: '1 + 1' } },
      { name: 'calculator', arguments: { expression: '2 + 2' } },
      { name: 'add_note', arguments: { text: 'milk' } },
      { name: 'list_notes', arguments: {} },
    ];
    const steps = [first, ...between, first].map((call) => ({ toolCalls: [call] }));
    const { say, requests } = await start({ reply: (_request, index) => steps[index] ?? { text: 'Done.' } });
    await say('milk?');
    const results = requests('reply')[7]!
      .messages.filter((m) => m.role === 'tool')
      .map((m) => m.content);
    expect(results).toHaveLength(7);
    expect(results.at(-1)).toBe('No earlier messages match.');
  });
});
