import { goIdQueries, type GoIdQueries } from '../../store/go-ids-queries.ts';
import type { Store, StoreExtension } from '../../store/store.ts';
import {
  mapGoParticipant,
  type ImportedParticipant,
  type ImportProblem,
  type MapOptions,
} from './map-go-participant.ts';
import { readGoStudy, type GoSource } from './read-go-study.ts';

export interface ImportReport {
  imported: ImportedParticipant[];
  /** Already here (imported before, by its Go id; or enrolled with the same phone): a second run changes nothing. */
  skipped: Array<{ goId: string; phoneNumber: string; reason: string }>;
  problems: ImportProblem[];
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
  const { participants, queuedJobs } = await readGoStudy(source);
  const goIds = store.extend(goIdQueries);
  const report: ImportReport = { imported: [], skipped: [], problems: [] };
  for (const row of participants) {
    const mapped = mapGoParticipant(row, queuedJobs, options);
    if ('message' in mapped) {
      report.problems.push(mapped);
      continue;
    }
    const reason = await alreadyHere(store, goIds.ops, mapped);
    if (reason) {
      report.skipped.push({ goId: row.id, phoneNumber: mapped.participant.phoneNumber, reason });
      continue;
    }
    if (!options.dryRun) {
      try {
        await write(goIds, mapped, options.now);
      } catch (error) {
        report.problems.push({
          goId: row.id,
          field: 'write',
          message: error instanceof Error ? error.message : String(error),
        });
        continue;
      }
    }
    report.imported.push(mapped);
  }
  return report;
}

/** Why a Go participant is not imported again, or undefined when they are new here. */
async function alreadyHere(store: Store, goIds: GoIdQueries, imported: ImportedParticipant) {
  const known = await goIds.findGoId(imported.goId);
  if (known) return known.participantId ? 'imported before' : 'imported before, deleted here since';
  if (await store.findParticipantByPhone(imported.participant.phoneNumber)) return 'phone already enrolled here';
  return undefined;
}

/** One participant and everything of theirs, with their Go id, in one transaction. */
async function write(goIds: StoreExtension<GoIdQueries>, imported: ImportedParticipant, now: Date): Promise<void> {
  await goIds.transaction(async (tx, ids) => {
    await tx.insertParticipant(imported.participant);
    await ids.recordGoId({ goId: imported.goId, participantId: imported.participant.id, importedAt: now });
    await tx.insertConversation(imported.conversation);
    await tx.appendMessages(imported.messages);
    await tx.saveProfile(imported.profile);
    for (const schedule of imported.schedules) await tx.insertSchedule(schedule);
    for (const timer of imported.timers) await tx.scheduleTimer(timer);
  });
}

/** The report as a table a person reads at the end of a run. */
export function reportTable(report: ImportReport, dryRun: boolean): string {
  const lines = [
    `${dryRun ? 'Would import' : 'Imported'}: ${report.imported.length}; already here: ${report.skipped.length}; problems: ${report.problems.length}`,
    '',
  ];
  lines.push('go id | phone | status | sub-state | messages | schedules | timers');
  for (const item of report.imported) {
    const { participant, conversation } = item;
    lines.push(
      [
        item.goId,
        participant.phoneNumber,
        participant.status,
        conversation.subState,
        item.messages.length,
        item.schedules.length,
        item.timers.length,
      ].join(' | '),
    );
  }
  for (const skipped of report.skipped)
    lines.push(`${skipped.goId} | ${skipped.phoneNumber} | unchanged: ${skipped.reason}`);
  for (const problem of report.problems) lines.push(`${problem.goId} | problem: ${problem.field}: ${problem.message}`);
  return lines.join('\n');
}
