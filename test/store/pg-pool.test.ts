// @requires postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgPool } from '../../src/store/open-store.ts';
import { TcpProxy } from '../kit/tcp-proxy.ts';
import { waitFor } from '../kit/wait-for.ts';
import { PG_URL } from '../kit/requirements.ts';

const PG = new URL(PG_URL);

let proxy: TcpProxy;
beforeAll(async () => {
  proxy = await new TcpProxy({ host: PG.hostname, port: Number(PG.port || 5432) }).up();
});
afterAll(() => proxy?.down());

describe('the PostgreSQL pool', () => {
  it(
    'survives a checked-out connection dying between two queries: logged, dropped on release, the pool works ' +
      'again',
    async () => {
      const url = new URL(PG);
      url.port = String(proxy.port);
      const logged: string[] = [];
      const pool = createPgPool(url.href, 'public', { logger: { info: (_obj, msg) => logged.push(String(msg)) } });
      try {
        const client = await pool.connect();
        expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
        // No query in flight: pg emits 'error' on the client itself, which would be uncaught
        // (and fail this run) without the pool's per-connection listener.
        await proxy.down();
        await waitFor(() => logged.includes('PostgreSQL connection lost'), { what: 'the lost connection logged' });
        await expect(client.query('select 1')).rejects.toThrow();
        client.release();
        expect(pool.totalCount).toBe(0);

        await proxy.up();
        expect((await pool.query('select 2 as two')).rows).toEqual([{ two: 2 }]);
      } finally {
        await pool.end();
      }
    },
  );

  it('closes a connection whose query got no answer in time (dropped packets) instead of reusing it', async () => {
    const url = new URL(PG);
    url.port = String(proxy.port);
    const pool = createPgPool(url.href, 'public', {
      queryTimeoutMs: 200,
      connectTimeoutMs: 500,
      logger: { info: () => undefined },
    });
    try {
      const client = await pool.connect();
      proxy.blackhole();
      await expect(client.query('select 1')).rejects.toThrow('Query read timeout');
      client.release(); // as Kysely does after a failed query: without an error
      // Reused, the next query would queue behind the silent one, and what was held (a statement of
      // a transaction already rolled back, say) would still run once delivered.
      await waitFor(() => pool.totalCount === 0, { what: 'the silent connection closed' });
      proxy.restore();
      expect((await pool.query('select 2 as two')).rows).toEqual([{ two: 2 }]);
    } finally {
      proxy.restore();
      await pool.end();
    }
  });
});
