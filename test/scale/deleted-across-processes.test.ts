// @requires postgres
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { EventClient } from '../kit/event-client.ts';
import { pgSchemas } from '../kit/pg-schemas.ts';
import { PG_URL } from '../kit/requirements.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

// Two server processes' worth (in-process, each with its own pool and fan-out connection) on one
// PostgreSQL schema: a participant deleted through one ends the live streams the other serves.
const schemas = pgSchemas('gone');
let servers: TestServer[] = [];
let clients: EventClient[] = [];

afterEach(async () => {
  for (const client of clients) client.close();
  clients = [];
  for (const server of servers) await server.close();
  servers = [];
});
afterAll(() => schemas.dropAll());

const model = () => createScriptedProvider(() => ({ text: 'ok' }));

/** Two servers on one fresh schema, and that schema's name. */
async function twoProcesses(): Promise<[TestServer, TestServer, string]> {
  const env = schemas.next();
  const a = await startTestServer(env, { provider: model() });
  const b = await startTestServer(env, { provider: model() });
  servers.push(a, b);
  return [a, b, env.DATABASE_SCHEMA!];
}

async function enrol(server: TestServer, phone: string): Promise<string> {
  const created = await server.request('POST', '/conversation/participants', { phone_number: phone, name: 'Sam' });
  return created.body.result.id as string;
}

async function follow(server: TestServer, id: string): Promise<EventClient> {
  const client = await EventClient.connect(server.url, id, '?lastEventId=0');
  clients.push(client);
  await client.waitFor((event) => event.type === 'resync', 'the snapshot');
  return client;
}

const errors = (client: EventClient) => client.of('error').map((event) => (event.type === 'error' ? event.data : null));

describe("a deleted participant's streams in other processes", () => {
  it('end with not_found when the participant is deleted through another process', async () => {
    const [a, b] = await twoProcesses();
    const id = await enrol(a, '+14165550191');
    const kept = await enrol(a, '+14165550192');
    const elsewhere = await follow(b, id);
    const here = await follow(a, id);
    const other = await follow(b, kept);

    expect((await a.request('DELETE', `/conversation/participants/${id}`)).status).toBe(200);
    expect(await here.closed()).toBe(1008);
    expect(await elsewhere.closed()).toBe(1008);
    expect(errors(elsewhere)).toEqual([{ code: 'not_found', field: 'id' }]);
    // Another conversation followed in that process is untouched.
    expect(other.closeCode).toBeNull();
    expect(errors(other)).toEqual([]);
  });

  it('end once the fan-out connection is back, if the deletion went untold while it was down', async () => {
    const [a, b, schema] = await twoProcesses();
    const id = await enrol(a, '+14165550193');
    const kept = await enrol(a, '+14165550194');
    const elsewhere = await follow(b, id);
    const other = await follow(b, kept);
    // Deleted without a word to anyone (as when the notification was lost)...
    expect(await b.store.deleteParticipant(id)).toBe(true);
    expect(elsewhere.closeCode).toBeNull();
    // ...then B's listening connection drops. B only listens (it sent no notification), so its
    // connection's last statement is still its LISTEN.
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const ended = await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where pid <> pg_backend_pid() and query like $1`,
        [`LISTEN "promptpipe_events_${schema}"%`],
      );
      expect(ended.rowCount).toBeGreaterThanOrEqual(1);
    } finally {
      await admin.end();
    }
    // B reconnects (after a second) and finds the conversation gone.
    expect(await elsewhere.closed()).toBe(1008);
    expect(errors(elsewhere)).toEqual([{ code: 'not_found', field: 'id' }]);
    expect(other.closeCode).toBeNull();
    expect(errors(other)).toEqual([]);
  });
});
