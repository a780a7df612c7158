import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/llm/llm-provider.ts';
import { createScriptedProvider, type ScriptedStep } from '../../src/llm/scripted-provider.ts';
import { openStore } from '../../src/store/open-store.ts';
import { ChildServer } from '../kit/child-server.ts';
import { EventClient } from '../kit/event-client.ts';
import { startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';
import { openWebSession } from '../kit/web-session.ts';
import { crmOf } from '../kit/crm.ts';

// A confirmed change (cancel, reschedule, book) and the dialog moving past it commit together
// (decision 005): whatever stops the turn afterwards, the next message sees the change as done,
// and the caller is never told that nothing was changed.
let server: TestServer | undefined;
let children: ChildServer[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const child of children) await child.stop();
  children = [];
});

const lastUser = (request: LlmRequest) => [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
const facts = (request: LlmRequest) =>
  request.messages[0]!.content.split('\n')
    .filter((line) => line.startsWith('Fact:'))
    .join(' ');
const DECISIONS: Record<string, ScriptedStep> = {
  'verify me': { toolCalls: [{ name: 'verify_account', arguments: { phone: '+14155550100', zip: '94107' } }] },
  cancel: { toolCalls: [{ name: 'list_appointments', arguments: { purpose: 'cancel' } }] },
  'the first': { toolCalls: [{ name: 'select_appointment', arguments: { appointmentId: 'apt_alex_1' } }] },
  yes: { toolCalls: [{ name: 'confirm', arguments: { answer: 'yes' } }] },
  'a person please': { toolCalls: [{ name: 'escalate', arguments: { reason: 'the caller asked for a person' } }] },
};

describe('a confirmed change and the dialog commit together', () => {
  /** A web session on a scripted model whose narration of `hangOn` waits until the caller barges in. */
  async function interruptible(hangOn: string) {
    let hang = true;
    const provider = createScriptedProvider((request) => {
      const role = /^\[service-desk:(\w+)\]/.exec(request.messages[0]?.content ?? '')![1];
      if (role === 'acknowledge') return { text: 'On it.' };
      if (role === 'decide') return DECISIONS[lastUser(request)] ?? {};
      if (hang && lastUser(request) === hangOn) return { delayMs: 600_000 };
      return { text: `Narrated: ${facts(request)}` };
    });
    server = await startTestServer({ CLOCK: 'virtual', CLOCK_START: '2026-06-01T17:00:00Z' }, { provider });
    const session = await openWebSession(server, 'service-desk');
    const bargeIn = async () => {
      await server!.request('POST', `/api/conversations/${session.id}/message`, { text: hangOn });
      await waitFor(
        () =>
          provider.requests.some(
            (request) =>
              request.messages[0]!.content.startsWith('[service-desk:narrate]') && lastUser(request) === hangOn,
          ),
        { what: `the narration of "${hangOn}"` },
      );
      expect(
        (await server!.request('POST', `/api/conversations/${session.id}/message`, { type: 'barge_in' })).body,
      ).toMatchObject({ interrupted: true });
      await server!.engine.idle();
      hang = false;
    };
    return { ...session, bargeIn };
  }

  it(
    'a barge-in after the cancellation leaves it done: the next messages tell it, never "nothing was ' +
      'changed", and it is audited once',
    async () => {
      const { say, id, bargeIn } = await interruptible('yes');
      await say('verify me');
      await say('cancel');
      await say('the first');
      await bargeIn();

      expect(await server!.store.getFlowState(id)).toMatchObject({ state: 'Completed', selectedAppointmentId: null });
      const next = await say('hello?');
      expect(next.text).toMatch(
        /Done earlier, not yet told to the caller: cancelled Quarterly pest control on Thursday, June 4/,
      );
      const again = await say('yes');
      expect(`${next.text} ${again.text}`).not.toMatch(/nothing was changed/i);
      expect(again.text).not.toMatch(/Done earlier/); // told once
      expect((await crmOf(server!.store).upcomingAppointments('cus_alex', '2026-06-01', 5)).map((a) => a.id)).toEqual([
        'apt_alex_2',
      ]);
      const cancels = (await server!.store.listToolCalls(id)).filter((call) => call.name === 'cancel_appointment');
      expect(cancels.map((call) => call.status)).toEqual(['ok']);
    },
  );

  it(
    'a ticket the caller asked for commits with the dialog too: ' + 'after a barge-in the next reply gives its number',
    async () => {
      const { say, id, bargeIn } = await interruptible('a person please');
      await say('verify me');
      await bargeIn();
      expect(await server!.store.getFlowState(id)).toMatchObject({
        state: 'Completed',
        untold: { change: 'escalated' },
      });
      expect((await say('hello?')).text).toMatch(
        /Done earlier, not yet told to the caller: A person will call back; the ticket number is tkt_\w+\./,
      );
      expect((await server!.store.listToolCalls(id)).filter((call) => call.name === 'escalate')).toHaveLength(1);
    },
  );

  it(
    'a process killed right after the cancellation: the re-run of the "yes" tells it as done, and the audit ' +
      'has it',
    async () => {
      const database = tempSqliteUrl();
      const start = async (env: Record<string, string> = {}) => {
        const child = await ChildServer.start({
          DATABASE_URL: database,
          CLOCK: 'virtual',
          CLOCK_START: '2026-06-01T17:00:00Z',
          LLM_PROVIDER: 'offline',
          ...env,
        });
        children.push(child);
        return child;
      };
      const doomed = await start({ PROMPTPIPE_FAILPOINT: 'desk.after-change' });
      const id = (await doomed.request('POST', '/api/conversations', { flow: 'service-desk' })).body.result
        .id as string;
      const client = await EventClient.connect(doomed.url, id, '?lastEventId=0');
      const finals = () => client.of('final').map((event) => ('text' in event ? String(event.text) : ''));
      await waitFor(() => finals().length === 1, { what: 'greeting' });
      for (const text of ['I need to cancel an appointment', '+14155550100 94107', 'the second one']) {
        const before = finals().length;
        await doomed.request('POST', `/api/conversations/${id}/message`, { text });
        await waitFor(() => finals().length > before, { what: `reply to ${text}` });
      }
      expect(finals().at(-1)).toMatch(/Shall I cancel your Termite inspection/);
      await doomed.request('POST', `/api/conversations/${id}/message`, { text: 'yes' });
      expect(await doomed.exited()).toMatchObject({ signal: 'SIGKILL' });
      client.close();

      const restarted = await start();
      const after = await EventClient.connect(restarted.url, id, '?lastEventId=0');
      const told = await after.waitFor(
        (event) => event.type === 'final' && 'text' in event && /already cancelled/.test(String(event.text)),
        'the re-run reply',
        15_000,
      );
      expect('text' in told && told.text).toMatch(
        /I've already cancelled your Termite inspection on Thursday, June 18, 1:00–3:00 PM/,
      );
      expect(
        after
          .of('final')
          .map((event) => ('text' in event ? String(event.text) : ''))
          .join('\n'),
      ).not.toMatch(/nothing was changed/i);
      const summary = await (await fetch(`${restarted.url}/api/conversations/${id}/summary`)).text();
      after.close();
      await restarted.stop();

      const store = await openStore(database);
      try {
        expect((await crmOf(store).upcomingAppointments('cus_alex', '2026-06-01', 5)).map((a) => a.id)).toEqual([
          'apt_alex_1',
        ]);
        const cancels = (await store.listToolCalls(id)).filter((call) => call.name === 'cancel_appointment');
        expect(cancels.map((call) => call.status)).toEqual(['ok']);
        expect(await store.getFlowState(id)).toMatchObject({ state: 'Completed', untold: null });
      } finally {
        await store.close();
      }
      expect(summary).toMatch(/never finished[\s\S]*cancel_appointment/);
    },
    60_000,
  );
});
