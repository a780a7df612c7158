import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { openWebSession } from '../kit/web-session.ts';

// Issue #22: a caller hears amounts, dates and times the way their locale writes them
// (`DESK_LOCALE`), in the desk's zone (`DESK_TIME_ZONE`): in the narration, the options listed, a
// confirmation and the resync view. The offline demo model words the facts as it is given them.
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A caller who asks about their bill, then moves their next appointment to the second window offered. */
async function billAndMove(env: Record<string, string>) {
  server = await startTestServer({ CLOCK: 'virtual', ...env });
  const { id, say } = await openWebSession(server, 'service-desk');
  const bill = (await say('What do I owe? It is 415-555-0100, ZIP 94107')).text;
  const appointments = (await say('I need to reschedule')).text;
  const windows = (await say('the first one')).text;
  const question = (await say('the second')).text;
  const answer = await server.request('POST', `/api/conversations/${id}/resync`, { lastEventId: 0 });
  const view = answer.body.result.resync.data.view as {
    options: { items: Array<{ label: string }> };
    confirmation: { appointment: string; window: string };
  };
  return { bill, appointments, windows, question, view };
}

describe('service desk locale and zone', () => {
  it('DESK_LOCALE=de-DE, DESK_TIME_ZONE=Europe/Berlin: German amounts, dates and 24-hour windows', async () => {
    // 23:00 UTC on June 1 is already June 2 in Berlin: the desk's today, and the demo data
    // seeded around it, follow DESK_TIME_ZONE (in Los Angeles it would still be June 1).
    const told = await billAndMove({
      CLOCK_START: '2026-06-01T23:00:00Z',
      DESK_LOCALE: 'de-DE',
      DESK_TIME_ZONE: 'Europe/Berlin',
    });
    expect(told.bill).toMatch(/you're verified[\s\S]*You have 1 open invoice: 129,00 \$ due Freitag, 12\. Juni\./);
    expect(told.appointments).toMatch(/1\. Quarterly pest control on Freitag, 5\. Juni, 09:00–11:00 at 123 Market St/);
    expect(told.appointments).toMatch(/2\. Termite inspection on Freitag, 19\. Juni, 13:00–15:00 at /);
    expect(told.windows).toMatch(
      /Open windows:\n1\. Mittwoch, 3\. Juni, 09:00–11:00\n2\. Mittwoch, 3\. Juni, 13:00–15:00/,
    );
    expect(told.question).toMatch(
      /Shall I move your Quarterly pest control on Freitag, 5\. Juni, 09:00–11:00 to Mittwoch, 3\. Juni, 13:00–15:00\?/,
    );
    expect(told.view.options.items[1]!.label).toBe('Mittwoch, 3. Juni, 13:00–15:00');
    expect(told.view.confirmation).toMatchObject({
      appointment: 'Quarterly pest control on Freitag, 5. Juni, 09:00–11:00',
      window: 'Mittwoch, 3. Juni, 13:00–15:00',
    });
    // Nothing in the en-US way slips through.
    const all = [told.bill, told.appointments, told.windows, told.question].join('\n');
    expect(all).not.toMatch(/\$\d|\b(AM|PM)\b|Friday|Wednesday|June/);
  });

  it('by default (en-US, America/Los_Angeles): dollars, "Thursday, June 11", 12-hour windows', async () => {
    const told = await billAndMove({ CLOCK_START: '2026-06-01T17:00:00Z' });
    expect(told.bill).toMatch(/You have 1 open invoice: \$129\.00 due Thursday, June 11\./);
    expect(told.appointments).toMatch(/1\. Quarterly pest control on Thursday, June 4, 9:00–11:00 AM at 123 Market St/);
    expect(told.appointments).toMatch(/2\. Termite inspection on Thursday, June 18, 1:00–3:00 PM at /);
    expect(told.windows).toMatch(
      /Open windows:\n1\. Tuesday, June 2, 9:00–11:00 AM\n2\. Tuesday, June 2, 1:00–3:00 PM/,
    );
    expect(told.question).toMatch(
      /Shall I move your Quarterly pest control on Thursday, June 4, 9:00–11:00 AM to Tuesday, June 2, 1:00–3:00 PM\?/,
    );
    expect(told.view.confirmation).toMatchObject({
      appointment: 'Quarterly pest control on Thursday, June 4, 9:00–11:00 AM',
      window: 'Tuesday, June 2, 1:00–3:00 PM',
    });
  });
});
