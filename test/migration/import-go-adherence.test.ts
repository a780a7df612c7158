import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { importGoStudy, reportTable } from '../../src/migration/go/import-go-study.ts';
import { openStore } from '../../src/store/open-store.ts';
import { startTestServer, tempSqliteUrl } from '../kit/test-server.ts';
import { GO_SQLITE_FIXTURE, IMPORT_OPTIONS } from './go-postgres-fixture.ts';
import { expectAdherenceAsGo, goPrompts, goTotalPrompts } from './go-study-adherence.ts';

const options = IMPORT_OPTIONS;
const MAYA = 'p_6ddb126738635da7b462fec7b5d13883';

describe("a Go study's daily prompts, imported", () => {
  it('are counted by a dry run, which writes nothing', async () => {
    const store = await openStore(tempSqliteUrl());
    try {
      const dry = await importGoStudy(store, { from: GO_SQLITE_FIXTURE }, { ...options, dryRun: true });
      const prompts = goPrompts();
      const totals = goTotalPrompts();
      expect(dry.imported.map((item) => [item.goId, item.dailyPrompts])).toEqual(
        [...totals.keys()].map((goId) => [
          goId,
          {
            imported: prompts.filter((prompt) => prompt.goId === goId).length,
            goCounted: totals.get(goId),
          },
        ]),
      );
      expect(dry.imported.map((item) => item.dailyPrompts.imported)).toEqual([17, 17, 17, 14, 4, 0]);
      const table = reportTable(dry, true);
      expect(table).toContain('| messages | daily prompts | deliveries |');
      expect(table).toContain(`${MAYA} | +14165550101 | active | FEEDBACK | 75 | 17 | 71 | 1 | 1`);
      expect(table).toMatch(/^Daily prompts: one per Go daily_prompt_reminder job .* Go kept no prompt text/m);
      expect(table).not.toContain('note:'); // Go's counters agree with its jobs here
      expect(await store.countParticipants()).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('are what the study overview, its series and prompts.csv count, once however often imported', async () => {
    const url = tempSqliteUrl();
    const store = await openStore(url);
    try {
      await importGoStudy(store, { from: GO_SQLITE_FIXTURE }, { ...options, dryRun: false });
      const again = await importGoStudy(store, { from: GO_SQLITE_FIXTURE }, { ...options, dryRun: false });
      expect(again.imported).toEqual([]);
    } finally {
      await store.close();
    }
    const server = await startTestServer({
      DATABASE_URL: url,
      CLOCK: 'virtual',
      CLOCK_START: options.now.toISOString(),
    });
    try {
      await expectAdherenceAsGo(server);
    } finally {
      await server.close();
    }
  });

  it("are said in the report to fall short of Go's own count when a prompt's job is gone", async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'promptpipe-go-')), 'state.db');
    copyFileSync(GO_SQLITE_FIXTURE, path);
    const go = new DatabaseSync(path);
    go.prepare(
      `delete from jobs where id = (select min(id) from jobs
        where kind = 'daily_prompt_reminder' and json_extract(payload_json, '$.participant_id') = ?)`,
    ).run(MAYA);
    go.close();
    const store = await openStore(tempSqliteUrl());
    try {
      const report = await importGoStudy(store, { from: path }, { ...options, dryRun: true });
      expect(report.problems).toEqual([]);
      expect(report.imported[0]).toMatchObject({ goId: MAYA, dailyPrompts: { imported: 16, goCounted: 17 } });
      expect(reportTable(report, true)).toContain(
        `${MAYA} | note: Go counted 17 daily prompt(s) (userProfile.total_prompts) and its jobs hold 16: ` +
          'the study overview and export count 16; the other 1 cannot be rebuilt (Go kept no time for them)',
      );
    } finally {
      await store.close();
    }
  });
});
