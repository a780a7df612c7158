import { describe, expect, it } from 'vitest';
import { createPgPool } from './open-store.ts';

// Issue #18 item 2: on a network that drops packets, every PostgreSQL connection needs client-side
// connect and query timeouts and TCP keepalive, and the server ends a transaction whose client went
// silent. The pool is only configured here (nothing connects), so no database is needed.
describe('the PostgreSQL pool settings', () => {
  it('set connect/query timeouts, TCP keepalive, and server-side statement and idle-transaction timeouts', async () => {
    const pool = createPgPool('postgres://nobody@127.0.0.1:1/none', 'public', {
      connectTimeoutMs: 300,
      queryTimeoutMs: 200,
    });
    try {
      expect(pool.options).toMatchObject({ keepAlive: true, connectionTimeoutMillis: 300, query_timeout: 1200 });
      expect(pool.options.options).toContain('-c statement_timeout=200');
      expect(pool.options.options).toContain('-c idle_in_transaction_session_timeout=400');
    } finally {
      await pool.end();
    }
  });
});
