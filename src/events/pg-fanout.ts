import pg from 'pg';
import type { Logger } from 'pino';
import { pgClientSettings } from '../store/open-store.ts';

export interface PgFanoutOptions {
  url: string;
  schema: string;
  logger: Logger;
  /** The store's connect and query timeouts (a listener on a dead network must notice it too). */
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
  /** Another process (or this one) wrote events of this conversation. */
  written: (conversationId: string) => void;
  /** Another process deleted this conversation (with its participant). */
  gone?: (conversationId: string) => void;
  /** Another process (or this one) let go of this conversation's lease. */
  released: (conversationId: string) => void;
  /** Another process waits for this conversation's lease (whoever keeps it idle lets go). */
  wanted?: (conversationId: string) => void;
  /** The listening connection was re-established: notifications may have been missed. */
  reconnected: () => void;
}

export interface PgFanout {
  /** Tells every process that events of the conversation were written (coalesced, asynchronous). */
  notify(conversationId: string): void;
  /** Tells every process that the conversation was deleted: their streams of it end. */
  notifyGone(conversationId: string): void;
  /** Tells every process that this one let go of the conversation's lease. */
  notifyReleased(conversationId: string): void;
  /** Tells every process that this one waits for the conversation's lease. */
  notifyWanted(conversationId: string): void;
  close(): Promise<void>;
}

/** On the lease channel, a payload `want:<id>` asks for the lease; a bare id says it was let go. */
const WANTED = 'want:';
/** On the events channel, `gone:<id>` says the conversation was deleted; a bare id, that it has new events. */
const GONE = 'gone:';

/** How long notifications are gathered before they are sent, in ms. */
const COALESCE_MS = 5;

/**
 * Event fan-out between processes on one PostgreSQL database (decision 004): `NOTIFY` carries
 * only the conversation id; the events themselves are read from the table, which stays the one
 * source of truth (and of replay). A second channel says a conversation's lease was let go, so
 * a process waiting for it need not poll. One dedicated connection listens and notifies.
 */
export async function startPgFanout(options: PgFanoutOptions): Promise<PgFanout> {
  const channel = `promptpipe_events_${options.schema}`.toLowerCase();
  const leaseChannel = `promptpipe_leases_${options.schema}`.toLowerCase();
  /** Pending notifications: the channel, a space, the conversation id. */
  const pending = new Set<string>();
  let client: pg.Client | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ ...pgClientSettings(options), connectionString: options.url });
    next.on('notification', (message) => {
      if (!message.payload) return;
      if (message.channel === channel) {
        if (message.payload.startsWith(GONE)) options.gone?.(message.payload.slice(GONE.length));
        else options.written(message.payload);
      } else if (message.channel !== leaseChannel) return;
      else if (message.payload.startsWith(WANTED)) options.wanted?.(message.payload.slice(WANTED.length));
      else options.released(message.payload);
    });
    next.on('error', (error) => {
      options.logger.warn({ err: error }, 'event fan-out connection lost; reconnecting');
      if (client === next) client = null;
      void next.end().catch(() => undefined);
      if (!closed) setTimeout(() => void reconnect(), 1000).unref();
    });
    await next.connect();
    await next.query(`LISTEN "${channel}"; LISTEN "${leaseChannel}"`);
    client = next;
  };
  const reconnect = async () => {
    try {
      await connect();
      options.reconnected();
    } catch (error) {
      options.logger.warn({ err: error }, 'event fan-out reconnect failed; retrying');
      if (!closed) setTimeout(() => void reconnect(), 1000).unref();
    }
  };
  /** Sends what is pending in one statement; sends never overlap (one connection, one query at a time). */
  let sending: Promise<void> = Promise.resolve();
  const send = (): Promise<void> => {
    timer = null;
    sending = sending.then(async () => {
      const keys = [...pending];
      pending.clear();
      if (keys.length === 0 || !client) return;
      const channels = keys.map((key) => key.slice(0, key.indexOf(' ')));
      const ids = keys.map((key) => key.slice(key.indexOf(' ') + 1));
      await client
        .query('select pg_notify(c, id) from unnest($1::text[], $2::text[]) as t(c, id)', [channels, ids])
        .catch((error: unknown) => options.logger.warn({ err: error }, 'event notification not sent'));
    });
    return sending;
  };

  const enqueue = (on: string, conversationId: string) => {
    if (closed) return;
    pending.add(`${on} ${conversationId}`);
    timer ??= setTimeout(() => void send(), COALESCE_MS);
  };

  await connect();
  return {
    notify: (conversationId) => enqueue(channel, conversationId),
    notifyGone: (conversationId) => enqueue(channel, `${GONE}${conversationId}`),
    notifyReleased: (conversationId) => enqueue(leaseChannel, conversationId),
    notifyWanted: (conversationId) => enqueue(leaseChannel, `${WANTED}${conversationId}`),
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await send();
      await client?.end().catch(() => undefined);
    },
  };
}
