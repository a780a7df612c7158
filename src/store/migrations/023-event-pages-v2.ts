import type { Migration } from 'kysely';

/**
 * No change to the schema: from here on `event_pages.events` may hold version 2 pages (each event
 * written as what changed from the one before it, `event-page-codec.ts`), which a server from
 * before this migration cannot read. Recorded as a migration so that such a server refuses the
 * database at start (Kysely's migrator does not start on a migration it does not know) instead of
 * failing to replay conversations later.
 */
export function eventPagesV2Migration(): Migration {
  return { async up(): Promise<void> {} };
}
