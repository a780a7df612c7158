import pg from 'pg';
import type { Logger } from 'pino';
import { describeError } from '../core/errors.ts';

export interface PgFanoutOptions {
  url: string;
  schema: string;
  logger: Logger;
  /** Another process (or this one) wrote events of this conversation. */
  written: (conversationId: string) => void;
  /** The listening connection was re-established: notifications may have been missed. */
  reconnected: () => void;
}

export interface PgFanout {
  /** Tells every process that events of the conversation were written (coalesced, asynchronous). */
  notify(conversationId: string): void;
  close(): Promise<void>;
}

/** How long notifications are gathered before they are sent, in ms. */
const COALESCE_MS = 5;

/**
 * Event fan-out between processes on one PostgreSQL database (decision 004): `NOTIFY` carries
 * only the conversation id; the events themselves are read from the table, which stays the one
 * source of truth (and of replay). One dedicated connection listens and notifies.
 */
export async function startPgFanout(options: PgFanoutOptions): Promise<PgFanout> {
  const channel = `promptpipe_events_${options.schema}`.toLowerCase();
  const pending = new Set<string>();
  let client: pg.Client | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: options.url });
    next.on('notification', (message) => {
      if (message.channel === channel && message.payload) options.written(message.payload);
    });
    next.on('error', (error) => {
      options.logger.warn({ err: describeError(error) }, 'event fan-out connection lost; reconnecting');
      if (client === next) client = null;
      void next.end().catch(() => undefined);
      if (!closed) setTimeout(() => void reconnect(), 1000).unref();
    });
    await next.connect();
    await next.query(`LISTEN "${channel}"`);
    client = next;
  };
  const reconnect = async () => {
    try {
      await connect();
      options.reconnected();
    } catch (error) {
      options.logger.warn({ err: describeError(error) }, 'event fan-out reconnect failed; retrying');
      if (!closed) setTimeout(() => void reconnect(), 1000).unref();
    }
  };
  const send = async () => {
    timer = null;
    const ids = [...pending];
    pending.clear();
    for (const id of ids) {
      await client?.query('select pg_notify($1, $2)', [channel, id]).catch((error: unknown) => options.logger.warn({ err: describeError(error) }, 'event notification not sent'));
    }
  };

  await connect();
  return {
    notify(conversationId) {
      if (closed) return;
      pending.add(conversationId);
      timer ??= setTimeout(() => void send(), COALESCE_MS);
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await send();
      await client?.end().catch(() => undefined);
    },
  };
}
