// @requires chromium
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../kit/browser.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { turn } from '../store/store-fixtures.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  // The offline demo model and the virtual clock, as in the README's start command.
  server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T12:00:00Z' });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 }, timezoneId: 'UTC' });
  page.setDefaultTimeout(8_000);
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => {
    // 4xx responses are the validation test doing its job; anything else is a console bug.
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) pageErrors.push(message.text());
  });
  await page.goto(`${server.url}/`);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const messages = (p: Page) => p.locator('#messages li .text');

async function chat(text: string, reply: RegExp): Promise<void> {
  const before = await messages(page).count();
  await page.fill('#chat-text', text);
  await page.press('#chat-text', 'Enter');
  await page.locator('#messages li.assistant .text', { hasText: reply }).last().waitFor();
  expect(await messages(page).count()).toBeGreaterThan(before);
}

describe('operator console in headless Chromium', () => {
  it('names the offline demo model and shows the virtual clock controls', async () => {
    await expect.poll(() => page.textContent('#model-badge')).toContain('offline demo model — configure LLM_BASE_URL');
    await expect.poll(() => page.textContent('#clock-now')).toContain('2026-06-01 12:00:00 UTC');
    expect(await page.getByRole('button', { name: 'fast-forward +1 day' }).isVisible()).toBe(true);
  });

  it('shows a validation error next to the field', async () => {
    await page.fill('#f-phone', '12345');
    await page.click('#enrol-form button[type=submit]');
    await expect.poll(() => page.textContent('[data-error-for="phone_number"]')).toMatch(/not a valid phone number/);
    await expect.poll(() => page.textContent('#status')).toMatch(/invalid_phone_number/);
  });

  it('enrols, completes intake by chat, fast-forwards a day, answers Done and counts the success', async () => {
    await page.fill('#f-phone', '+1 416 555 0170');
    await page.fill('#f-name', 'Robin');
    await page.fill('#f-timezone', 'America/Toronto');
    await page.click('#enrol-form button[type=submit]');
    await page.locator('#messages li.assistant .text', { hasText: /Hi Robin!/ }).waitFor();
    expect(await page.textContent('#participant-list')).toContain('+14165550170');

    await chat('I want to walk more', /Why does walking matter to you/);
    await chat('I want more energy', /What time of day/);
    await chat('7am', /What do you already do every day/);
    await chat('right after breakfast', /Here is your first habit prompt/);
    // Tool progress arrives over the conversation's WebSocket stream.
    await expect.poll(() => page.textContent('#activity')).toContain('transition_state done');
    expect(await page.textContent('#stream-state')).toContain('streaming');
    await expect.poll(() => page.textContent('#sub-state')).toBe('FEEDBACK');
    await expect.poll(() => page.textContent('#side')).toContain('daily 07:00');

    await page.getByRole('button', { name: 'fast-forward +1 day' }).click();
    await expect.poll(() => page.textContent('#status')).toMatch(/timer\(s\) fired/);
    const poll = page.locator('#messages li[data-kind="poll"]', { hasText: 'Did you do it?' });
    await poll.waitFor();
    expect(await page.locator('#messages li[data-source="timer"]').count()).toBeGreaterThanOrEqual(2);

    await poll.getByRole('button', { name: 'Done' }).click();
    await page.locator('#messages li.assistant .text', { hasText: /well done/i }).waitFor();
    await expect.poll(() => page.textContent('dd[data-field="success_count"]')).toBe('1');
    await expect.poll(() => page.textContent('dd[data-field="total_prompts"]')).toBe('1');
    expect(await page.textContent('#side')).toContain('tool call');

    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/console-participant.png', fullPage: true });
  }, 60_000);

  it('renders model and participant text as text, never as HTML', async () => {
    await page.fill('#chat-text', '<img src=x onerror="globalThis.pwned=1"><b>bold</b>');
    await page.press('#chat-text', 'Enter');
    const echoed = page.locator('#messages li.user .text', { hasText: '<b>bold</b>' });
    await echoed.waitFor();
    expect(await echoed.locator('b, img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).toBeUndefined();
  });

  it('pauses and resumes, and shows changes made elsewhere live', async () => {
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => page.textContent('#participant-header')).toContain('paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => page.textContent('#participant-header')).toContain('active');

    // A message arriving through the API (another channel) appears without a reload.
    await server.request('POST', '/conversation/inbound', { from: '+14165550170', text: 'sent from my phone' });
    await page.locator('#messages li.user .text', { hasText: 'sent from my phone' }).waitFor();
  });

  it('marks a failed turn and a turn that ran more than once', async () => {
    const participants = (await server.request('GET', '/conversation/participants')).body.result as Array<{
      id: string;
      phone_number: string;
    }>;
    const robin = participants.find((p) => p.phone_number === '+14165550170')!;
    const conversation = (await server.store.findConversationByParticipant(robin.id))!;
    const now = server.clock.now();
    await server.store.insertTurn(
      turn(conversation.id, { status: 'failed', error: 'llm_rejected: 401', startedAt: now, finishedAt: now }),
    );
    await server.store.insertTurn(turn(conversation.id, { attempts: 3, startedAt: now, finishedAt: now }));
    // Anything arriving refreshes the side panel.
    await server.request('POST', '/conversation/inbound', { from: '+14165550170', text: 'still there?' });
    await expect.poll(() => page.locator('li.turn.failed .badge.failed').count()).toBe(1);
    expect(await page.textContent('li.turn.failed')).toContain('llm_rejected: 401');
    await expect.poll(() => page.textContent('li.turn.retried .badge.warn')).toBe('3 tries');
    expect(await page.locator('li.turn.completed:not(.retried) .badge').count()).toBe(0);
  });

  it('runs a service-desk session: verification keeps the question and answers it', async () => {
    await page.selectOption('#session-flow', 'service-desk');
    await page.getByRole('button', { name: 'Start a session' }).click();
    await page.locator('#messages li.assistant .text', { hasText: 'How can I help' }).waitFor();
    await chat('When is my next appointment?', /phone number and 5-digit ZIP/);
    await chat('415-555-0100, ZIP 94107', /Quarterly pest control/);
    await expect.poll(() => page.textContent('#session-state')).toBe('PresentingAppointments');
  });

  it('runs an assistant session on the offline model: arithmetic, notes and recall', async () => {
    await page.selectOption('#session-flow', 'assistant');
    await page.getByRole('button', { name: 'Start a session' }).click();
    await expect.poll(() => page.textContent('#session-title')).toBe('Assistant session');
    await page.locator('#messages li.assistant .text', { hasText: 'offline demo model' }).waitFor();
    await chat('what is 1,250 * 12', /1,250 \* 12 = 15000/);
    await chat('note: buy oat milk', /Saved note note_/);
    await chat('list my notes', /buy oat milk/);
    await chat('what did I say about milk?', /UTC\] User: note: buy oat milk/);

    // Deleting waits for a yes (decision 022): the operator approves it here.
    const saved = await page.locator('#messages li.assistant .text', { hasText: 'Saved note' }).first().textContent();
    const noteId = /note_\w+/.exec(saved ?? '')![0];
    await chat(`delete ${noteId}`, /I need your OK to: delete your note "buy oat milk"/);
    await page.locator('#approvals li', { hasText: 'delete your note "buy oat milk"' }).waitFor();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.locator('#messages li.assistant .text', { hasText: `Deleted note ${noteId}` }).waitFor();
    await expect.poll(() => page.locator('#approvals li').count()).toBe(0);
  });

  it('lists the web sessions again after a reload, and opens one with its transcript', async () => {
    await page.reload();
    const links = page.locator('#session-list a');
    await expect
      .poll(async () => (await links.allTextContents()).map((text) => text.replace(/ …\w{6}$/, '')).sort())
      .toEqual(['Assistant session', 'Service-desk session']);
    await links.filter({ hasText: 'Service-desk session' }).click();
    await expect.poll(() => page.textContent('#session-title')).toBe('Service-desk session');
    await page
      .locator('#messages li.assistant .text', { hasText: /Quarterly pest control/ })
      .first()
      .waitFor();
    await expect.poll(() => page.textContent('#session-state')).toBe('PresentingAppointments');
  });

  it('renders the API reference from /openapi.json', async () => {
    const docs = await browser.newPage();
    await docs.goto(`${server.url}/docs`);
    await docs.locator('.operation', { hasText: '/conversation/participants/{id}/timers' }).first().waitFor();
    const text = await docs.textContent('#docs');
    expect(text).toContain('Enrol a participant');
    // Responses with their schemas, the socket's frames, the outbound webhook.
    expect(text).toMatch(/201 Enrolled; the greeting turn runs next/);
    expect(text).toContain('WebSocket frames — server → client: SessionEvent; client → server: SocketFrame');
    expect(text).toContain('outbound-message');
    await docs.close();
    expect(pageErrors).toEqual([]);
  });
});
