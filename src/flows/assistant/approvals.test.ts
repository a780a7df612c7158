import { describe, expect, it } from 'vitest';
import {
  answerOf,
  approvalQuestion,
  closePause,
  decideAll,
  decideCall,
  heldCallOf,
  openPause,
  owesResume,
  readApprovals,
  waiting,
} from './approvals.ts';

const now = new Date('2026-11-25T10:00:00Z');
const call = (id: string) => heldCallOf({ id, name: 'delete_note', arguments: `{"id":"${id}"}` }, `delete ${id}`);
const paused = () =>
  openPause(
    readApprovals(undefined),
    { turnId: 't1', requestedAt: now.toISOString(), profile: 'life', system: 's', dialogue: [] },
    [call('a'), call('b')],
  );

describe('approvals', () => {
  it('reads a plain yes or no; anything longer or else is a new request', () => {
    for (const yes of ['yes', 'Yes!', 'ok', 'yes please', 'Go ahead.', 'sure, do it'])
      expect(answerOf(yes), yes).toBe('yes');
    for (const no of ['no', 'No, keep it.', 'don’t', 'cancel', 'never mind']) expect(answerOf(no), no).toBe('no');
    for (const other of [
      'what time is it?',
      'yesterday I went out',
      'nobody knows',
      'okay so tell me about the weather in Berlin today',
    ])
      expect(answerOf(other), other).toBe('other');
  });

  it('resumes only once every call is decided; the same answer twice changes nothing, the other is a conflict', () => {
    const first = decideCall(paused(), 'a', true, now);
    expect(first).toMatchObject({
      kind: 'decided',
      complete: false,
      call: { status: 'approved', decidedBy: 'operator' },
    });
    const state = (first as { state: ReturnType<typeof paused> }).state;
    expect(waiting(state).map((c) => c.id)).toEqual(['b']);
    expect(decideCall(state, 'a', true, now).kind).toBe('unchanged');
    expect(decideCall(state, 'a', false, now).kind).toBe('conflict');
    expect(decideCall(state, 'zzz', true, now).kind).toBe('unknown');
    const second = decideCall(state, 'b', false, now);
    expect(second).toMatchObject({ kind: 'decided', complete: true });
    expect(owesResume((second as { state: ReturnType<typeof paused> }).state)).toBe(true);
  });

  it('keeps decided calls after the pause closes, and still answers a retried decision about them', () => {
    const closed = closePause(decideAll(paused(), 'denied', now));
    expect(closed.pause).toBeNull();
    expect(closed.decided.map((c) => [c.id, c.status, c.decidedBy])).toEqual([
      ['a', 'denied', 'person'],
      ['b', 'denied', 'person'],
    ]);
    expect(decideCall(closed, 'a', false, now).kind).toBe('unchanged');
    expect(decideCall(closed, 'a', true, now).kind).toBe('conflict');
  });

  it('asks in words what would happen, one call or several', () => {
    expect(approvalQuestion([call('a')])).toBe(
      'Before I go ahead, I need your OK to: delete a.\nReply yes to go ahead, or no to leave it.',
    );
    expect(approvalQuestion([call('a'), call('b')])).toBe(
      'Before I go ahead, I need your OK to:\n1. delete a\n2. delete b\n' +
        'Reply yes to go ahead with all of them, or no to leave them.',
    );
  });

  it('treats a stored state it cannot read as no pause', () => {
    expect(readApprovals({ pause: { nonsense: true } })).toEqual({ pause: null, decided: [] });
  });
});
