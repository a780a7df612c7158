import type { Store } from '../../store/store.ts';
import {
  mapGoParticipant,
  type ImportedParticipant,
  type ImportProblem,
  type MapOptions,
} from './map-go-participant.ts';
import { readGoStudy } from './read-go-study.ts';

export interface ImportReport {
  imported: ImportedParticipant[];
  /** Already here (same phone number): a second run changes nothing. */
  skipped: Array<{ goId: string; phoneNumber: string }>;
  problems: ImportProblem[];
}

/**
 * Reads a Go PromptPipe SQLite database and writes its participants into `store`, one
 * transaction each: a participant whose write fails is rolled back and reported, the others
 * stay. A dry run maps and checks everything and writes nothing.
 */
export async function importGoStudy(
  store: Store,
  sourcePath: string,
  options: MapOptions & { dryRun: boolean },
): Promise<ImportReport> {
  const { participants, queuedJobs } = readGoStudy(sourcePath);
  const report: ImportReport = { imported: [], skipped: [], problems: [] };
  for (const row of participants) {
    const mapped = mapGoParticipant(row, queuedJobs, options);
    if ('message' in mapped) {
      report.problems.push(mapped);
      continue;
    }
    if (await store.findParticipantByPhone(mapped.participant.phoneNumber)) {
      report.skipped.push({ goId: row.id, phoneNumber: mapped.participant.phoneNumber });
      continue;
    }
    if (!options.dryRun) {
      try {
        await write(store, mapped);
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

async function write(store: Store, imported: ImportedParticipant): Promise<void> {
  await store.transaction(async (tx) => {
    await tx.insertParticipant(imported.participant);
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
    lines.push(`${skipped.goId} | ${skipped.phoneNumber} | already here, unchanged`);
  for (const problem of report.problems) lines.push(`${problem.goId} | problem: ${problem.field}: ${problem.message}`);
  return lines.join('\n');
}
