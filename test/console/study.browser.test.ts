// @requires chromium
import { mkdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Participant } from '../../src/core/domain.ts';
import { emptyProfile } from '../../src/core/profile.ts';
import { donePoll } from '../../src/flows/habit-coach/polls.ts';
import { parse } from 'csv-parse/sync';
import { launchChromium } from '../kit/browser.ts';
import { unzipText } from '../kit/unzip.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { conversation, message, participant } from '../store/store-fixtures.ts';

const NOW = new Date('2026-06-10T16:00:00Z'); // 12:00 in Toronto
const daysAgo = (days: number, hours = 0) => new Date(NOW.getTime() - days * 86_400_000 - hours * 3_600_000);

let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

/** A participant and their transcript: a daily prompt each given day, answered with the given text. */
async function seed(overrides: Partial<Participant>, days: Array<[number, string | null]>) {
  const p = participant({ enrolledAt: daysAgo(7), ...overrides });
  await server.store.insertParticipant(p);
  const c = conversation(p.id, { subState: 'FEEDBACK' });
  await server.store.insertConversation(c);
  // The coach's own counters, as it would have kept them.
  const done = days.filter(([, reply]) => reply && ['1', 'done', 'yes'].includes(reply)).length;
  await server.store.saveProfile({
    ...emptyProfile(p.id, p.enrolledAt),
    totalPrompts: days.length,
    successCount: done,
  });
  for (const [ago, reply] of days) {
    const sentAt = daysAgo(ago, 4); // 08:00 in Toronto
    const prompt = { role: 'assistant' as const, source: 'timer' as const, createdAt: sentAt };
    await server.store.appendMessages([
      message(c.id, { ...prompt, text: 'After coffee, walk around the block.' }),
      message(c.id, { ...prompt, kind: 'poll', text: 'Did you do it?', poll: { ...donePoll(), firstNumber: 1 } }),
    ]);
    if (reply)
      await server.store.appendMessages([
        message(c.id, { text: reply, createdAt: new Date(sentAt.getTime() + 3_600_000) }),
      ]);
  }
  return p;
}

beforeAll(async () => {
  server = await startTestServer({
    CLOCK: 'virtual',
    CLOCK_START: NOW.toISOString(),
    STUDY_TIMEZONE: 'America/Toronto',
  });
  // Ana: done, not yet, silence, done, done, done; Ben: silent all week; Cy: paused; a name that is markup.
  await seed({ name: 'Ana', cohort: 'arm-A' }, [
    [6, '1'],
    [5, 'Not yet'],
    [4, null],
    [3, 'done'],
    [2, 'yes'],
    [1, '1'],
  ]);
  await seed({ name: 'Ben', cohort: 'arm-B' }, [
    [3, null],
    [2, null],
  ]);
  await seed({ name: 'Cy', cohort: 'arm-A', status: 'paused' }, []);
  await seed({ name: '<img src=x onerror="globalThis.pwned=1">', cohort: 'arm-B' }, []);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 1100 }, timezoneId: 'America/Toronto' });
  page.setDefaultTimeout(8_000);
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (entry) => {
    // 4xx responses are the import's checks doing their job; anything else (a CSP violation) is a bug.
    if (entry.type() === 'error' && !/status of 4\d\d/.test(entry.text())) pageErrors.push(entry.text());
  });
  await page.goto(`${server.url}/`);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const rows = () => page.locator('#study-table tbody tr');
const names = () => page.locator('#study-table tbody tr .who a').allTextContents();

describe('the Study view in headless Chromium', () => {
  it('is the first thing shown: every participant with their flags, times in the browser zone', async () => {
    await expect.poll(() => rows().count()).toBe(4);
    const ben = page.locator('#study-table tr', { hasText: 'Ben' });
    expect(await ben.locator('.flag').allTextContents()).toEqual(['no reply 48 h']);
    expect(await page.locator('#study-table tr', { hasText: 'Cy' }).locator('.flag').allTextContents()).toEqual([
      'paused',
    ]);
    // Ana's last reply, 2026-06-09 13:00 UTC, shown in Toronto with UTC on hover.
    const lastReply = page.locator('#study-table tr', { hasText: 'Ana' }).locator('time');
    expect(await lastReply.textContent()).toBe('2026-06-09 09:00:00 EDT');
    expect(await lastReply.getAttribute('title')).toBe('2026-06-09 13:00:00 UTC');
    expect(await page.textContent('#study-totals')).toContain('4 participant(s) · 8 prompts sent');
    expect(await page.inputValue('#f-timezone')).toBe('America/Toronto');
  });

  it('shows markup in a name as text', async () => {
    const cell = page.locator('#study-table .who a', { hasText: '<img src=x' });
    expect(await cell.count()).toBe(1);
    expect(await page.locator('#study-table img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).toBeUndefined();
  });

  it('sorts by a column, both ways, and searches', async () => {
    const streak = page.locator('#study-table th', { hasText: 'Streak' });
    await streak.getByRole('button').click();
    expect(await streak.getAttribute('aria-sort')).toBe('ascending');
    expect((await names()).at(-1)).toBe('Ana');
    await streak.getByRole('button').click();
    expect(await streak.getAttribute('aria-sort')).toBe('descending');
    expect((await names())[0]).toBe('Ana');
    expect(await page.locator('#study-table tr', { hasText: 'Ana' }).locator('td').nth(8).textContent()).toBe('3');

    await page.fill('#study-search', 'BEN');
    await expect.poll(names).toEqual(['Ben']);
    await page.fill('#study-search', '');
    await expect.poll(() => rows().count()).toBe(4);
  });

  it('filters by cohort and status on the server, charts included', async () => {
    await page.selectOption('#study-cohort', 'arm-A');
    await expect.poll(() => page.textContent('#study-totals')).toContain('2 participant(s) · 6 prompts sent');
    expect((await names()).sort()).toEqual(['Ana', 'Cy']);
    await page.selectOption('#study-status', 'paused');
    await expect.poll(names).toEqual(['Cy']);
    await page.selectOption('#study-status', '');
    await page.selectOption('#study-cohort', '');
    await expect.poll(() => rows().count()).toBe(4);
  });

  it('draws the per-day charts with uPlot, and gives their numbers', async () => {
    for (const id of ['#chart-rates', '#chart-active']) expect(await page.locator(`${id} canvas`).count()).toBe(1);
    expect(await page.textContent('#chart-rates .u-legend')).toContain('done rate %');
    expect(await page.textContent('#chart-active .u-legend')).toContain('active participants');
    await page.locator('details.numbers summary').click();
    // June 7 in Toronto: Ana's prompt (done, replied) and Ben's (silent): 2 prompts, 1 replied, 1 done.
    const june7 = page.locator('details.numbers tr', { hasText: '2026-06-07' });
    expect(await june7.locator('td').allTextContents()).toEqual(['2026-06-07', '4', '2', '1', '1', '0', '1', '1']);
  });

  it("shows a participant's adherence calendar", async () => {
    await page.getByRole('button', { name: 'Adherence calendar of Ana' }).click();
    const days = page.locator('#calendar li.day');
    await expect.poll(() => days.count()).toBe(8);
    expect(await days.evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-status')))).toEqual([
      'no_prompt',
      'done',
      'replied',
      'no_reply',
      'done',
      'done',
      'done',
      'no_prompt',
    ]);
    expect(await page.textContent('#study-calendar')).toContain('current streak 3');
    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/study-view.png', fullPage: true });
  });

  it('checks a CSV file first, lists its problems, and enrols only after a clean check', async () => {
    const csv = (lastPhone: string) =>
      Buffer.from(
        'phone_number,name,timezone,cohort\n' +
          '+14165550201,Dee,America/Toronto,arm-C\n+14165550202,Eli,America/Toronto,arm-C\n' +
          `+14165550203,Fay,America/Toronto,arm-C\n${lastPhone},Gus,Mars/Base,arm-C\n`,
      );
    await page.setInputFiles('#import-file', { name: 'bad.csv', mimeType: 'text/csv', buffer: csv('12345') });
    await page.click('#import-check');
    await expect
      .poll(() => page.textContent('#import-report'))
      .toContain('problem(s) in the file; nothing was enrolled');
    const problems = await page.locator('#import-report tbody tr').allTextContents();
    expect(problems.length).toBeGreaterThanOrEqual(2);
    expect(problems.every((row) => row.startsWith('5'))).toBe(true);
    expect(await page.isHidden('#import-run')).toBe(true);
    await page.locator('#import-report').screenshot({ path: 'test-results/study-import-check.png' });

    const good = csv('+14165550204').toString().replace('Mars/Base', 'Europe/Paris');
    await page.setInputFiles('#import-file', { name: 'good.csv', mimeType: 'text/csv', buffer: Buffer.from(good) });
    await page.click('#import-check');
    await expect.poll(() => page.textContent('#import-report')).toContain('4 participant(s) would be enrolled');
    expect(await rows().count()).toBe(4); // a dry run enrols nobody
    await page.click('#import-run');
    await expect.poll(() => page.textContent('#import-report')).toContain('4 participant(s) enrolled');
    await expect.poll(() => rows().count()).toBe(8);
    expect(await page.locator('#study-cohort option').allTextContents()).toContain('arm-C');
  });

  it('downloads the export, de-identified on request', async () => {
    await page.check('#export-deidentify');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-download')]);
    expect(download.suggestedFilename()).toBe('promptpipe-study-2026-06-10-deidentified.zip');
    const bytes = readFileSync((await download.path())!);
    expect(bytes.subarray(0, 2).toString()).toBe('PK');
    await expect.poll(() => page.textContent('#export-status')).toMatch(/Downloaded promptpipe-study-.*\.zip/);
    expect(pageErrors).toEqual([]);
  });

  it("exports a window of days in the study's zone, and names it in the file", async () => {
    await page.uncheck('#export-deidentify');
    await page.fill('#export-from', '2026-06-08');
    await page.fill('#export-to', '2026-06-09');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-download')]);
    expect(download.suggestedFilename()).toBe('promptpipe-study-2026-06-10-from-2026-06-08-to-2026-06-09.zip');
    const files = await unzipText(readFileSync((await download.path())!));
    // Ana's prompts of 8 and 9 June and Ben's of 8 June (08:00 in Toronto); not Ana's four before.
    const prompts = parse(files.get('prompts.csv')!, { columns: true }) as Array<{ sent_at: string }>;
    expect(prompts.map((row) => row.sent_at).sort()).toEqual([
      '2026-06-08T12:00:00.000Z',
      '2026-06-08T12:00:00.000Z',
      '2026-06-09T12:00:00.000Z',
    ]);

    await page.fill('#export-from', '2026-06-10');
    await page.click('#export-download');
    await expect.poll(() => page.textContent('#status')).toContain('to: 2026-06-09 is before from (2026-06-10)');
    expect(pageErrors).toEqual([]);
  });
});
