import { describe, expect, it } from 'vitest';
import { admitToolCalls } from './tool-call-limits.ts';

const calls = (count: number) =>
  Array.from({ length: count }, (_, index) => ({ id: `call_${index}`, name: 'echo', arguments: '{}' }));
const verdicts = (count: number, before: number, perResponse: number, perTurn: number) =>
  admitToolCalls(calls(count), before, { perResponse, perTurn }).map((admission) =>
    admission.run ? 'run' : admission.outcome.result.includes('one response') ? 'response' : 'turn',
  );

describe('admitToolCalls', () => {
  it('admits the first perResponse calls, in order, and answers every other one', () => {
    expect(verdicts(5, 0, 2, 24)).toEqual(['run', 'run', 'response', 'response', 'response']);
  });

  it('admits only what the turn has left, counting calls admitted earlier this turn', () => {
    expect(verdicts(4, 22, 8, 24)).toEqual(['run', 'run', 'turn', 'turn']);
    expect(verdicts(10, 24, 8, 24)).toEqual([...Array(8).fill('turn'), 'response', 'response']);
  });

  it('keeps every call, so each id gets its one result', () => {
    const admitted = admitToolCalls(calls(50), 0, { perResponse: 8, perTurn: 24 });
    expect(admitted.map((admission) => admission.call.id)).toEqual(calls(50).map((call) => call.id));
    expect(
      admitted
        .filter((admission) => !admission.run)
        .every((admission) => !admission.run && admission.outcome.status === 'error'),
    ).toBe(true);
  });
});
