import type { ExpressionBuilder, Kysely } from 'kysely';
import type { QueryContext } from './query-context.ts';
import type { Database } from './schema.ts';

/**
 * What a desk ticket says for why it was opened once its caller's data was erased (decision 024):
 * the model's words for the request went with the transcript they came from.
 */
export const ERASED_TICKET_REASON = 'erased: the caller was a participant whose data was deleted on request';

/**
 * Removes a participant and their personal data, in one transaction (decision 024). False when
 * there was no such participant (another removal got there first).
 *
 * Deleted: the conversations `conversationsOf` names (their own, and the web sessions started for
 * them), whose foreign keys take their transcript, the full-text index rows (SQLite's trigger),
 * embeddings, notes, flow state, session callers, turns and tool-call audit, session events,
 * timers, inbox, outbox, leases and followers; the provider's receipts of what was sent to them;
 * their notes and inbox rows kept outside any conversation (what their number sent before they
 * were enrolled included); their channel contacts; the participant, whose keys take their profile
 * and schedules. Kept without the personal fields: a desk ticket opened in one of those
 * conversations or with their number (the operator's team may still have it in hand), a web
 * session not theirs that was given their number, a contact that opted out (so the number stays
 * unreachable), and their Go id (so a second import does not bring them back).
 */
export async function eraseParticipant(ctx: QueryContext, id: string): Promise<boolean> {
  return ctx.atomic(async ({ db, dialect }) => {
    // Held until the end: a second removal waits here, then finds no one.
    const lock = db.selectFrom('participants').select('phone_number').where('id', '=', id);
    const found = await (dialect === 'postgres' ? lock.forUpdate() : lock).executeTakeFirst();
    if (!found) return false;
    const phone = found.phone_number;
    const conversations = await conversationsOf(db, id, phone);
    if (conversations.length > 0) {
      await eraseTicketsOf(db, conversations);
      await deleteReceiptsOf(db, conversations);
      await db.deleteFrom('conversations').where('id', 'in', conversations).execute();
    }
    await db.updateTable('crm_tickets').set({ phone: null }).where('phone', '=', phone).execute();
    await db.updateTable('session_callers').set({ phone: null }).where('phone', '=', phone).execute();
    await db.deleteFrom('assistant_notes').where('person', 'in', personsOf(id, phone)).execute();
    await eraseContacts(db, id, phone);
    await deleteInboxOutsideConversations(db, id, phone);
    await db.deleteFrom('participants').where('id', '=', id).execute();
    return true;
  });
}

/**
 * The conversations a participant's removal deletes, in id order: their own, and the web sessions
 * started for them (`session_callers.person` their id, or their number's `tel:` key from before
 * they were enrolled). Empty when there is no such participant.
 */
export async function conversationsOfParticipant(ctx: QueryContext, id: string): Promise<string[]> {
  const found = await ctx.db.selectFrom('participants').select('phone_number').where('id', '=', id).executeTakeFirst();
  return found ? conversationsOf(ctx.db, id, found.phone_number) : [];
}

async function conversationsOf(db: Kysely<Database>, id: string, phone: string): Promise<string[]> {
  const rows = await db
    .selectFrom('conversations')
    .select('id')
    .where('participant_id', '=', id)
    .union(db.selectFrom('session_callers').select('conversation_id as id').where('person', 'in', personsOf(id, phone)))
    .execute();
  return rows.map((row) => row.id).sort();
}

/** The keys a person's memory is kept under (decision 006): the participant's id, their number's. */
const personsOf = (id: string, phone: string) => [id, `tel:${phone}`];

/**
 * A ticket stays the CRM's: its id (the caller was told it), the customer the desk verified and
 * its time. What the caller said and where to reach them go: the number, the conversation (deleted)
 * and the reason (the model's words, from that conversation).
 */
async function eraseTicketsOf(db: Kysely<Database>, conversations: readonly string[]): Promise<void> {
  await db
    .updateTable('crm_tickets')
    .set({ phone: null, conversation_id: null, reason: ERASED_TICKET_REASON })
    .where('conversation_id', 'in', conversations)
    .execute();
}

/** Receipts name no conversation: found through the provider ids of the conversations' outbox rows. */
async function deleteReceiptsOf(db: Kysely<Database>, conversations: readonly string[]): Promise<void> {
  await db
    .deleteFrom('delivery_receipts')
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple('channel', 'provider_message_id'),
        'in',
        selectFrom('outbox')
          .select(['outbox.channel', 'outbox.provider_message_id'])
          .where('outbox.conversation_id', 'in', conversations)
          .where('outbox.provider_message_id', 'is not', null)
          .$narrowType<{ provider_message_id: string }>()
          .$asTuple('channel', 'provider_message_id'),
      ),
    )
    .execute();
}

/**
 * Their contacts on every channel, found by participant, number or contact id (an SMS contact's
 * id is the number, a WhatsApp one's its digits). One that opted out stays, keyed by the number
 * alone, so that nothing is sent to it until it says START: an opt-out outlives the participant.
 */
async function eraseContacts(db: Kysely<Database>, id: string, phone: string): Promise<void> {
  const theirs = (eb: ExpressionBuilder<Database, 'channel_contacts'>) =>
    eb.or([
      eb('participant_id', '=', id),
      eb('phone_number', '=', phone),
      eb('contact_id', 'in', [phone, phone.replace(/^\+/, '')]),
    ]);
  await db.deleteFrom('channel_contacts').where(theirs).where('opted_out_at', 'is', null).execute();
  await db
    .updateTable('channel_contacts')
    .set({ participant_id: null, phone_number: null, last_inbound_at: null })
    .where(theirs)
    .execute();
}

/**
 * Their inbox rows outside any conversation (migration 025: a conversation's go with it), and what
 * their number sent before they were enrolled (kept as an unknown sender's).
 */
async function deleteInboxOutsideConversations(db: Kysely<Database>, id: string, phone: string): Promise<void> {
  await db.deleteFrom('inbox').where('participant_id', '=', id).where('conversation_id', 'is', null).execute();
  await db
    .deleteFrom('inbox')
    .where('participant_id', 'is', null)
    .where('conversation_id', 'is', null)
    .where('sender', '=', phone)
    .execute();
}
