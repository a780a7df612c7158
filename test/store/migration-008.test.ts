// @requires postgres
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { inboxItem } from './store-fixtures.ts';
import { oldDatabasePlaces, oldDatabases } from './migration-kit.ts';

const places = oldDatabasePlaces('migration_008');
const PG_SCHEMA = places.pgSchema;

/** Inbox rows as version 007 stored them: one http "m1", a WhatsApp id, and a processed one. */
async function seedInbox(db: Kysely<unknown>): Promise<void> {
  await sql`insert into inbox (id, channel, channel_message_id, sender, text, status, received_at, processed_at) values
    ('in_old_1', 'http', 'm1', '+14165550101', 'from A', 'pending', 1000, null),
    ('in_old_2', 'whatsapp', 'wamid.1', '+14165550101', 'on WhatsApp', 'pending', 1000, null),
    ('in_old_3', 'http', 'm2', '+14165550101', 'done', 'processed', 500, 600)`.execute(db);
}

const backends = oldDatabases('007_inbox_sender', seedInbox, places);

describe.each(backends)('migration 008 on $name', ({ prepare }) => {
  it('keeps the inbox of version 007, in order, and dedupes message ids per sender from then on', async () => {
    const url = await prepare();
    const store = await openStore(url, { schema: PG_SCHEMA });
    try {
      expect(await store.getInbox('in_old_3')).toMatchObject({
        channel: 'http',
        channelMessageId: 'm2',
        status: 'processed',
        processedAt: new Date(600),
      });
      // A redelivery of a stored message is still a duplicate (the same sender).
      const redelivered = await store.insertInbox(
        inboxItem({ channel: 'http', sender: '+14165550101', channelMessageId: 'm1', text: 'from A' }),
      );
      expect(redelivered).toMatchObject({ duplicate: true, item: { id: 'in_old_1' } });
      expect(
        (
          await store.insertInbox(
            inboxItem({ channel: 'whatsapp', sender: '+14165550101', channelMessageId: 'wamid.1' }),
          )
        ).duplicate,
      ).toBe(true);
      // Another sender's "m1" is a message of its own, queued after the old ones received at the same time.
      const fromB = inboxItem({
        channel: 'http',
        sender: '+14165550102',
        channelMessageId: 'm1',
        text: 'from B',
        receivedAt: new Date(1000),
      });
      expect(await store.insertInbox(fromB)).toMatchObject({ item: fromB, duplicate: false });
      expect((await store.listPendingInbox()).map((item) => item.id)).toEqual(['in_old_1', 'in_old_2', fromB.id]);
      expect(await store.getVirtualClock()).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
