import type { Migration } from 'kysely';
import type { SqlDialect } from '../query-context.ts';
import { initialMigration } from './001-initial.ts';
import { turnLatencyMigration } from './002-turn-latency.ts';
import { channelsMigration } from './003-channels.ts';
import { leasesMigration } from './004-leases.ts';
import { demoCrmMigration } from './005-demo-crm.ts';
import { assistantMigration } from './006-assistant.ts';
import { inboxSenderMigration } from './007-inbox-sender.ts';
import { senderDedupMigration } from './008-sender-dedup.ts';
import { writeProbeMigration } from './009-write-probe.ts';
import { pendingOutboxMigration } from './010-pending-outbox.ts';
import { cohortMigration } from './011-cohort.ts';
import { writePathMigration } from './012-write-path.ts';
import { goIdsMigration } from './013-go-ids.ts';
import { sessionCallersMigration } from './014-session-callers.ts';
import { turnTraceMigration } from './015-turn-trace.ts';
import { personMemoryMigration } from './016-person-memory.ts';
import { turnAttemptsMigration } from './017-turn-attempts.ts';
import { inboxTraceMigration } from './018-inbox-trace.ts';
import { fencesMigration } from './019-fences.ts';
import { eventFollowersMigration } from './020-event-followers.ts';
import { timersByParticipantMigration } from './021-timers-by-participant.ts';
import { eventPagesMigration } from './022-event-pages.ts';
import { eventPagesV2Migration } from './023-event-pages-v2.ts';
import { turnToolCallsMigration } from './024-turn-tool-calls.ts';
import { cascadeByConversationMigration } from './025-cascade-by-conversation.ts';
import { ticketContactMigration } from './026-ticket-contact.ts';
import { ftsSecureDeleteMigration } from './027-fts-secure-delete.ts';

/**
 * Every migration, in order. Forward-only: never edit or remove one that has shipped; add the
 * next number. Names sort lexically, so keep the zero padding.
 */
export function allMigrations(dialect: SqlDialect): Record<string, Migration> {
  return {
    '001_initial': initialMigration(dialect),
    '002_turn_latency': turnLatencyMigration(),
    '003_channels': channelsMigration(),
    '004_leases': leasesMigration(),
    '005_demo_crm': demoCrmMigration(),
    '006_assistant': assistantMigration(dialect),
    '007_inbox_sender': inboxSenderMigration(),
    '008_sender_dedup': senderDedupMigration(dialect),
    '009_write_probe': writeProbeMigration(),
    '010_pending_outbox': pendingOutboxMigration(),
    '011_cohort': cohortMigration(),
    '012_write_path': writePathMigration(dialect),
    '013_go_ids': goIdsMigration(),
    '014_session_callers': sessionCallersMigration(),
    '015_turn_trace': turnTraceMigration(),
    '016_person_memory': personMemoryMigration(),
    '017_turn_attempts': turnAttemptsMigration(),
    '018_inbox_trace': inboxTraceMigration(),
    '019_fences': fencesMigration(dialect),
    '020_event_followers': eventFollowersMigration(),
    '021_timers_by_participant': timersByParticipantMigration(),
    '022_event_pages': eventPagesMigration(dialect),
    '023_event_pages_v2': eventPagesV2Migration(),
    '024_turn_tool_calls': turnToolCallsMigration(),
    '025_cascade_by_conversation': cascadeByConversationMigration(dialect),
    '026_ticket_contact': ticketContactMigration(),
    '027_fts_secure_delete': ftsSecureDeleteMigration(dialect),
  };
}
