import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import type { Store, StoreTx } from '../../src/store/store.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

// A turn's commit fails because the disk is full (SQLite): the database cannot serve now, so the
// turn waits it out (a short wait here) instead of giving the message up; the message stays
// pending, and no later message of the conversation is answered before it.
const PHONE = '+14165550191';
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** node:sqlite's error for SQLITE_FULL: the database refused the write, it is not unreachable. */
const diskFull = () =>
  Object.assign(new Error('database or disk is full'), {
    code: 'ERR_SQLITE_ERROR',
    errcode: 13,
    errstr: 'database or disk is full',
  });

/**
 * A store whose transactions that write transcript messages (a turn's commit, a give-up) fail
 * while `disk.fullFor` writes are left; the inbox (a small row, written first) still takes messages.
 */
function fillingDisk() {
  const disk = { fullFor: 0 };
  const failing = (tx: StoreTx): StoreTx =>
    new Proxy(tx, {
      get(target, key, receiver) {
        if (key !== 'appendMessages' || disk.fullFor <= 0) return Reflect.get(target, key, receiver);
        return async () => {
          disk.fullFor -= 1;
          throw diskFull();
        };
      },
    });
  const wrap = (store: Store): Store =>
    new Proxy(store, {
      get(target, key, receiver) {
        if (key !== 'transaction') return Reflect.get(target, key, receiver);
        return <T>(work: (tx: StoreTx) => Promise<T>) => target.transaction((tx) => work(failing(tx)));
      },
    });
  return { disk, wrap };
}

async function start() {
  const { disk, wrap } = fillingDisk();
  const echo = createScriptedProvider((request) => ({ text: `echo: ${request.messages.at(-1)?.content}` }));
  server = await startTestServer({}, { provider: echo, wrapStore: wrap, outageWaitMs: 1500 });
  expect((await server.request('POST', '/conversation/participants', { phone_number: PHONE })).status).toBe(201);
  await waitFor(() => server!.sink.to(PHONE).length === 1, { what: 'the greeting' });
  return { server, disk };
}

const replies = (server: TestServer) =>
  server.sink
    .to(PHONE)
    .slice(1)
    .map((message) => message.text);

async function send(server: TestServer, texts: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const text of texts) {
    const accepted = await server.request('POST', '/conversation/inbound', { from: PHONE, text, message_id: text });
    expect(accepted.status).toBe(202);
    ids.push(accepted.body.result.inbox_id);
  }
  return ids;
}

describe('a turn that fails and cannot be recorded either', () => {
  it("answers the conversation's messages in arrival order once the disk has room again", async () => {
    const { server, disk } = await start();
    // Full for four writes: the first message's turn is tried, waiting in between, until space
    // comes back; the others wait behind it.
    disk.fullFor = 4;
    await send(server, ['m0', 'm1', 'm2', 'm3']);
    await waitFor(() => replies(server).length === 4, { what: 'four replies', timeoutMs: 15_000 });
    expect(replies(server)).toEqual(['echo: m0', 'echo: m1', 'echo: m2', 'echo: m3']);
  });

  it('leaves them pending while the disk stays full; the sweep answers them in order later', async () => {
    const { server, disk } = await start();
    disk.fullFor = Infinity;
    const ids = await send(server, ['m0', 'm1', 'm2']);
    await server.engine.idle();
    expect(replies(server)).toEqual([]);
    for (const id of ids) expect(await server.store.getInbox(id)).toMatchObject({ status: 'pending' });

    disk.fullFor = 0; // nothing queues them again in this process but the sweep
    await waitFor(() => replies(server).length === 3, { what: 'the swept messages answered', timeoutMs: 20_000 });
    expect(replies(server)).toEqual(['echo: m0', 'echo: m1', 'echo: m2']);
  }, 40_000);
});
