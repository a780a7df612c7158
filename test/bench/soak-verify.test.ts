import { describe, expect, it } from 'vitest';
import { memoryReport, verify, type LedgerEntry, type Rows, type VerifyInput } from '../../bench/lib/soak-verify.ts';

// The soak's end-of-run checks (bench/soak.ts runs them after a real run; this file runs only the
// checker, on hand-made rows): a clean run passes, and each kind of breakage is reported.
const texts = { donePoll: 'Did you do it?', reminder: 'Friendly check-in', nudges: ['How did it go?'] };

function entry(seq: number, extra: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    sender: 'http:1',
    channel: 'http',
    channelMessageId: `id-${seq}`,
    expectedSender: '+14165551001',
    text: `hello ${seq}. ref b${seq}x`,
    tag: `ref b${seq}x`,
    seq,
    inboxId: `in_${seq}`,
    duplicateOnFirstAttempt: false,
    attempts: 1,
    ...extra,
  };
}

/** Two acknowledged messages, each stored, answered by one turn, the replies delivered through the webhook. */
function clean(): VerifyInput {
  const ledger = [entry(1), entry(2)];
  const rows: Rows = {
    inbox: ledger.map((e, i) => ({
      id: e.inboxId!,
      ordinal: i + 1,
      channel: 'http',
      channel_message_id: e.channelMessageId,
      sender: e.expectedSender,
      text: e.text,
      conversation_id: 'c1',
      status: 'processed',
      error: null,
    })),
    turns: ledger.map((e) => ({
      id: `t${e.seq}`,
      conversation_id: 'c1',
      inbox_id: e.inboxId,
      status: 'completed',
      trigger: 'message',
      error: null,
    })),
    messages: ledger.flatMap((e) => [
      {
        conversation_id: 'c1',
        seq: 2 * e.seq - 1,
        id: `u${e.seq}`,
        role: 'user',
        kind: 'text',
        text: e.text,
        source: 'participant',
        turn_id: `t${e.seq}`,
      },
      {
        conversation_id: 'c1',
        seq: 2 * e.seq,
        id: `r${e.seq}`,
        role: 'assistant',
        kind: 'text',
        text: `reply ${e.seq}`,
        source: 'model',
        turn_id: `t${e.seq}`,
      },
    ]),
    outbox: ledger.map((e, i) => ({
      id: `o${e.seq}`,
      ordinal: i + 1,
      conversation_id: 'c1',
      channel: 'webhook',
      recipient: '+14165551001',
      text: `reply ${e.seq}`,
      idempotency_key: `r${e.seq}`,
      status: 'sent',
      attempts: 1,
      next_attempt_at: 0,
      last_error: null,
      provider_message_id: null,
    })),
    timers: [
      {
        id: 'tm1',
        kind: 'daily-prompt',
        conversation_id: 'c1',
        due_at: 1000,
        status: 'done',
        attempts: 1,
        last_error: null,
        payload: '{}',
      },
      {
        id: 'tm2',
        kind: 'daily-prompt',
        conversation_id: 'c1',
        due_at: 9000,
        status: 'pending',
        attempts: 0,
        last_error: null,
        payload: '{}',
      },
    ],
  };
  rows.messages.push({
    conversation_id: 'c1',
    seq: 10,
    id: 'p1',
    role: 'assistant',
    kind: 'poll',
    text: 'Did you do it?',
    source: 'timer',
    turn_id: null,
  });
  return {
    ledger,
    refused: [],
    rows,
    deliveries: { whatsapp: [], twilio: [], webhook: ['r1', 'r2'] },
    now: 5000,
    texts,
  };
}

const checks = (input: VerifyInput) => verify(input).violations.map((v) => v.check);

describe('the soak checker', () => {
  it('finds nothing wrong with a clean run, and counts what it checked', () => {
    const report = verify(clean());
    expect(report.violations).toEqual([]);
    expect(report.counts['answered.once']).toBe(2);
    expect(report.counts['outbox.sent']).toBe(2);
    expect(report.counts['timer-messages.daily prompts']).toBe(1);
  });

  it(
    'reports an acknowledged message that is not in the inbox, stored under someone else, or with another ' + 'text',
    () => {
      const missing = clean();
      missing.rows.inbox.pop();
      expect(checks(missing)).toContain('stored');
      // Ids are deduplicated per sender: a row of another sender is not this message's.
      const taken = clean();
      taken.rows.inbox[1]!.sender = '+14165559999';
      expect(verify(taken).violations[0]!.detail).toMatch(/no inbox row has its message id/);
      const otherText = clean();
      otherText.rows.inbox[1]!.text = 'something else';
      expect(verify(otherText).violations[0]!.detail).toMatch(/saying "something else"/);
      const falseDuplicate = clean();
      falseDuplicate.ledger[0]!.duplicateOnFirstAttempt = true;
      expect(checks(falseDuplicate)).toEqual(['stored']);
    },
  );

  it('reports a message answered twice, not answered, or still pending', () => {
    const twice = clean();
    twice.rows.turns.push({
      id: 't1b',
      conversation_id: 'c1',
      inbox_id: 'in_1',
      status: 'completed',
      trigger: 'message',
      error: null,
    });
    expect(checks(twice)).toEqual(['answered']);
    const twoReplies = clean();
    twoReplies.rows.messages.push({
      conversation_id: 'c1',
      seq: 11,
      id: 'r1b',
      role: 'assistant',
      kind: 'text',
      text: 'again',
      source: 'model',
      turn_id: 't1',
    });
    expect(checks(twoReplies)).toEqual(['answered']);
    const pending = clean();
    pending.rows.inbox[0]!.status = 'pending';
    expect(checks(pending)).toEqual(['answered']);
  });

  it('reports messages stored out of order, and deliveries that left out of order', () => {
    const swapped = clean();
    swapped.rows.messages.find((m) => m.id === 'u1')!.seq = 5;
    expect(checks(swapped)).toContain('order');
    const delivered = clean();
    delivered.deliveries.webhook = ['r2', 'r1'];
    expect(checks(delivered)).toEqual(['order']);
  });

  it('reports a stuck or silently failed delivery, and one marked sent that never reached the channel', () => {
    const stuck = clean();
    stuck.rows.outbox[0]!.status = 'pending';
    expect(checks(stuck)).toEqual(['delivered']);
    const silent = clean();
    silent.rows.outbox[0]!.status = 'failed';
    expect(checks(silent)).toEqual(['delivered']);
    const visible = clean();
    Object.assign(visible.rows.outbox[0]!, { status: 'failed', last_error: 'HTTP 500' });
    expect(verify(visible)).toMatchObject({ violations: [], warnings: [{ check: 'delivered' }] });
    const phantom = clean();
    phantom.deliveries.webhook = ['r2'];
    expect(checks(phantom)).toEqual(['delivered']);
  });

  it('reports a due timer that never fired, one that gave up, and a timer whose effects committed twice', () => {
    const due = clean();
    due.now = 10_000;
    expect(checks(due)).toEqual(['timers']);
    const twice = clean();
    twice.rows.messages.push({
      conversation_id: 'c1',
      seq: 12,
      id: 'p2',
      role: 'assistant',
      kind: 'poll',
      text: 'Did you do it?',
      source: 'timer',
      turn_id: null,
    });
    expect(checks(twice)).toEqual(['timers']);
  });

  it('reports a web session reply that never reached the event stream, unless a full resync carried it', () => {
    const input = clean();
    input.streams = [
      { conversationId: 'c1', finals: new Set(['r1']), fullSnapshots: new Set(), partialSnapshots: new Set(['r2']) },
    ];
    expect(verify(input).violations[0]!.detail).toMatch(
      /1 of 2 committed replies never reached.*1 of them only in the transcript of a partial resync/,
    );
    input.streams = [
      { conversationId: 'c1', finals: new Set(['r1']), fullSnapshots: new Set(['r2']), partialSnapshots: new Set() },
    ];
    expect(checks(input)).toEqual([]);
  });

  it('judges memory only with enough lives, and calls a growing peak a leak', () => {
    const life = (index: number, peak: number) => ({
      life: index,
      pid: index,
      startedAtS: index * 30,
      endedAtS: index * 30 + 30,
      ended: 'SIGKILL',
      samples: [
        [index * 30, 150],
        [index * 30 + 20, peak],
      ] as Array<[number, number]>,
    });
    expect(memoryReport([1, 2, 3].map((i) => life(i, 200))).flat).toBeNull();
    expect(memoryReport([1, 2, 3, 4, 5, 6].map((i) => life(i, 200))).flat).toBe(true);
    expect(memoryReport([1, 2, 3, 4, 5, 6].map((i) => life(i, 200 + i * 40))).flat).toBe(false);
  });
});
