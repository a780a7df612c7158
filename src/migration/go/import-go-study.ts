import { describeError } from '../../core/errors.ts';
import { goIdQueries, type GoIdQueries } from '../../store/go-ids-queries.ts';
import type { Store, StoreExtension, StoreTx } from '../../store/store.ts';
import {
  mapGoParticipant,
  type ImportedParticipant,
  type ImportProblem,
  type MapOptions,
} from './map-go-participant.ts';
import { remindersByParticipant, unownedReminderProblems } from './go-reminders.ts';
import type { ImportedDelivery } from './map-go-history.ts';
import { readGoStudy, type GoSource, type GoStudy } from './read-go-study.ts';

export interface ImportReport {
  imported: ImportedParticipant[];
  /** Already here (imported before, by its Go id; or enrolled with the same phone): a second run changes nothing. */
  skipped: Array<{ goId: string; phoneNumber: string; reason: string }>;
  /**
   * What kept a Go participant out (none of theirs written; a later run brings them in once it is
   * fixed), every bad value of theirs named; a dry run finds each one the real run would.
   */
  problems: ImportProblem[];
  /** Go receipts and responses of numbers no participant has (an operator's test, a stranger, a WhatsApp LID). */
  unattributed: { receipts: number; responses: number };
}

/**
 * Reads a Go PromptPipe database (SQLite or PostgreSQL) and writes its participants into `store`, one
 * transaction each: a participant whose write fails is rolled back and reported, the others
 * stay. A dry run maps and checks everything and writes nothing.
 */
export async function importGoStudy(
  store: Store,
  source: GoSource,
  options: MapOptions & { dryRun: boolean },
): Promise<ImportReport> {
  const study = await readGoStudy(source);
  const goIds = store.extend(goIdQueries);
  const records = recordsByNumber(study);
  const reminders = remindersByParticipant(study.reminderJobs);
  const report: ImportReport = {
    imported: [],
    skipped: [],
    problems: reminders.unowned.flatMap((job) =>
      unownedReminderProblems(job).map((problem) => ({ goId: job.id, ...problem })),
    ),
    unattributed: unattributed(study, new Set(study.participants.map((row) => row.phone_number))),
  };
  for (const row of study.participants) {
    const jobs = reminders.byParticipant.get(row.id) ?? [];
    const mapped = mapGoParticipant(row, { jobs, ...records(row.phone_number) }, options);
    if ('problems' in mapped) {
      report.problems.push(...mapped.problems);
      continue;
    }
    const here = await alreadyHere(store, goIds.ops, mapped, options.dryRun);
    if (here) {
      if (here.link && !options.dryRun) {
        try {
          await goIds.ops.recordGoId({ goId: row.id, participantId: here.link, importedAt: options.now });
        } catch (error) {
          report.problems.push({ goId: row.id, field: 'write', message: describeError(error) });
          continue;
        }
      }
      report.skipped.push({ goId: row.id, phoneNumber: mapped.participant.phoneNumber, reason: here.reason });
      continue;
    }
    if (!options.dryRun) {
      try {
        await write(goIds, mapped, options.now);
      } catch (error) {
        report.problems.push({
          goId: row.id,
          field: 'write',
          message: describeError(error),
        });
        continue;
      }
    }
    report.imported.push(mapped);
  }
  return report;
}

/**
 * A Go number's receipts and responses. Go wrote `sent` receipts to the stored digits, and
 * `delivered` / `read` receipts and responses from `+` and the digits WhatsApp gave (fixture README §1.3).
 */
function recordsByNumber(study: GoStudy) {
  const group = <Row>(rows: Row[], key: (row: Row) => string) => {
    const groups = new Map<string, Row[]>();
    for (const row of rows) {
      const list = groups.get(key(row));
      if (list) list.push(row);
      else groups.set(key(row), [row]);
    }
    return groups;
  };
  const receipts = group(study.receipts, (receipt) => receipt.recipient);
  const responses = group(study.responses, (response) => response.sender);
  return (digits: string) => ({
    receipts: [...(receipts.get(digits) ?? []), ...(receipts.get(`+${digits}`) ?? [])],
    responses: responses.get(`+${digits}`) ?? [],
  });
}

function unattributed(study: GoStudy, numbers: ReadonlySet<string>) {
  const foreign = (address: string) => !numbers.has(address.replace(/^\+/, ''));
  return {
    receipts: study.receipts.filter((receipt) => foreign(receipt.recipient)).length,
    responses: study.responses.filter((response) => foreign(response.sender)).length,
  };
}

/**
 * Why a Go participant is not imported, or undefined when they are new here. Someone enrolled
 * here with their phone (before the import) keeps what they have here, and gets their Go id
 * (`link`): the export shows it and a later run knows them by it, even after a phone change or
 * their deletion here. Unless they have another one already (two Go rows, one number).
 */
async function alreadyHere(
  store: Store,
  goIds: GoIdQueries,
  imported: ImportedParticipant,
  dryRun: boolean,
): Promise<{ reason: string; link?: string } | undefined> {
  const known = await goIds.findGoId(imported.goId);
  if (known) return { reason: known.participantId ? 'imported before' : 'imported before, deleted here since' };
  const enrolled = await store.findParticipantByPhone(imported.participant.phoneNumber);
  if (!enrolled) return undefined;
  const theirs = (await goIds.goIdsOf([enrolled.id])).get(enrolled.id);
  if (theirs) return { reason: `phone already enrolled here, as Go participant ${theirs}` };
  return {
    reason: `phone already enrolled here: their Go id ${dryRun ? 'would be' : 'is'} recorded, nothing else imported`,
    link: enrolled.id,
  };
}

/** One participant and everything of theirs, with their Go id, in one transaction. */
async function write(goIds: StoreExtension<GoIdQueries>, imported: ImportedParticipant, now: Date): Promise<void> {
  await goIds.transaction(async (tx, ids) => {
    await tx.insertParticipant(imported.participant);
    await ids.recordGoId({ goId: imported.goId, participantId: imported.participant.id, importedAt: now });
    await tx.insertConversation(imported.conversation);
    await tx.appendMessages(imported.messages);
    await writeDeliveries(tx, imported.deliveries);
    await tx.saveProfile(imported.profile);
    for (const schedule of imported.schedules) await tx.insertSchedule(schedule);
    for (const timer of imported.timers) await tx.scheduleTimer(timer);
  });
}

/** Go's sends as deliveries already sent, with WhatsApp's reports: history the dispatcher never picks up. */
async function writeDeliveries(tx: StoreTx, deliveries: readonly ImportedDelivery[]): Promise<void> {
  await tx.enqueueOutbox(deliveries.map((delivery) => delivery.item));
  for (const { item, sentAt, reports } of deliveries) {
    await tx.markOutboxSent(item.id, sentAt, 1, item.idempotencyKey);
    for (const report of reports) await tx.recordDeliveryReceipt(report);
  }
}

/** The report as a table a person reads at the end of a run. */
export function reportTable(report: ImportReport, dryRun: boolean): string {
  const lines = [
    `${dryRun ? 'Would import' : 'Imported'}: ${report.imported.length}; ` +
      `already here: ${report.skipped.length}; problems: ${report.problems.length}`,
    '',
  ];
  lines.push('go id | phone | status | sub-state | messages | daily prompts | deliveries | schedules | timers');
  for (const item of report.imported) {
    const { participant, conversation } = item;
    lines.push(
      [
        item.goId,
        participant.phoneNumber,
        participant.status,
        conversation.subState,
        item.messages.length,
        item.dailyPrompts.imported,
        item.deliveries.length,
        item.schedules.length,
        item.timers.length,
      ].join(' | '),
    );
    const note = dailyPromptsNote(item.dailyPrompts);
    if (note) lines.push(`${item.goId} | note: ${note}`);
  }
  for (const skipped of report.skipped)
    lines.push(`${skipped.goId} | ${skipped.phoneNumber} | unchanged: ${skipped.reason}`);
  for (const problem of report.problems) lines.push(`${problem.goId} | problem: ${problem.field}: ${problem.message}`);
  if (report.imported.some((item) => item.dailyPrompts.imported > 0)) lines.push('', DAILY_PROMPTS_NOTE);
  const { receipts, responses } = report.unattributed;
  if (receipts + responses > 0)
    lines.push(
      '',
      `Not imported: ${receipts} receipt(s) and ${responses} response(s) of numbers that are no participant's ` +
        "(an operator's test send, a stranger, receipts WhatsApp sent from a LID number).",
    );
  return lines.join('\n');
}

/** What the daily prompts of an import are made of, and what Go did not keep of them. */
const DAILY_PROMPTS_NOTE =
  'Daily prompts: one per Go daily_prompt_reminder job (Go queued one with each prompt it sent), written as ' +
  'the prompt\'s "Did you do it?" poll at the time Go sent it, so the study overview and export count them, ' +
  'their replies and Done answers. Go kept no prompt text (prompts.csv leaves it empty), nor the text of its ' +
  'intensity polls and reminders: those sends are deliveries without text.';

/** When Go's own count of a participant's prompts differs from the prompts its jobs show: said, never a silent gap. */
function dailyPromptsNote({ imported, goCounted }: ImportedParticipant['dailyPrompts']): string | undefined {
  if (imported === goCounted) return undefined;
  const lost = goCounted - imported;
  return (
    `Go counted ${goCounted} daily prompt(s) (userProfile.total_prompts) and its jobs hold ${imported}: ` +
    `the study overview and export count ${imported}` +
    (lost > 0 ? `; the other ${lost} cannot be rebuilt (Go kept no time for them)` : '')
  );
}
