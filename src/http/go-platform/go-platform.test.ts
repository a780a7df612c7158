import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { branchText, checkPrompt } from './compose-prompt.ts';
import { describeGoSchedule, goDuration, nextRun } from './go-schedule.ts';
import { goPromptBody } from './go-schemas.ts';

const prompt = (body: object) => goPromptBody.parse({ to: '14165550123', ...body });
/** The field a refused prompt names. */
function refusedField(body: object, realModel = true, customGenerator = false): string | undefined {
  try {
    checkPrompt(prompt(body), { realModel, customGenerator });
    return undefined;
  } catch (error) {
    return error instanceof AppError ? error.field : 'not an AppError';
  }
}

describe("Go's prompt rules (models.Prompt.Validate)", () => {
  it('names the field each type needs, in the Go order', () => {
    expect(refusedField({ body: 'hi' })).toBeUndefined(); // static by default
    expect(refusedField({ type: '' })).toBe('body'); // an empty type is static, as Go read it
    expect(refusedField({ type: 'static', body: 'x'.repeat(4097) })).toBe('body');
    expect(refusedField({ type: 'static', body: 'é'.repeat(2049) })).toBe('body'); // 4098 bytes: Go counted bytes
    expect(refusedField({ type: 'genai', user_prompt: 'u' })).toBe('system_prompt');
    expect(refusedField({ type: 'genai', system_prompt: 's' })).toBe('user_prompt');
    expect(refusedField({ type: 'genai', system_prompt: 's', user_prompt: 'u' }, false)).toBe('type'); // offline model
    expect(refusedField({ type: 'branch' })).toBe('branch_options');
    expect(refusedField({ type: 'branch', branch_options: [{ label: 'A', body: 'a' }] })).toBe('branch_options');
    const options = (count: number) => Array.from({ length: count }, (_, i) => ({ label: `L${i}`, body: `b${i}` }));
    expect(refusedField({ type: 'branch', branch_options: options(11) })).toBe('branch_options');
    expect(refusedField({ type: 'branch', branch_options: options(10) })).toBeUndefined();
    expect(refusedField({ type: 'branch', branch_options: [...options(1), { label: '', body: 'b' }] })).toBe(
      'branch_options.1.label',
    );
    expect(refusedField({ type: 'branch', branch_options: [...options(1), { label: 'L', body: '' }] })).toBe(
      'branch_options.1.body',
    );
    expect(refusedField({ type: 'conversation' })).toBe('user_prompt');
    expect(refusedField({ type: 'conversation', user_prompt: 'u', state: 'INTAKE' })).toBe('state');
    expect(refusedField({ type: 'custom', body: 'x', state: 'initial' })).toBe('type'); // no generator
    expect(refusedField({ type: 'custom' }, true, true)).toBeUndefined(); // its generator says what it needs
  });

  it("formats a branch prompt as Go's Branch.Generate did", () => {
    const two = [
      { label: 'Option A', body: 'You chose A' },
      { label: 'Option B', body: 'You chose B' },
    ];
    expect(branchText('Choose an option:', two)).toBe(
      "Choose an option:\n\n1. Option A: You chose A\n2. Option B: You chose B\n\n(Reply with '1' or '2')",
    );
    expect(branchText('Pick\n', [...two, { label: 'C', body: 'c' }])).toBe(
      "Pick\n\n1. Option A: You chose A\n2. Option B: You chose B\n3. C: c\n\n(Reply with '1', '2', or '3')",
    );
  });
});

describe('a Go schedule', () => {
  it("fires at its hour and minute on the days it names, in the zone's local time", () => {
    const at = new Date('2026-03-20T12:00:00Z'); // a Friday; 08:00 in Toronto
    expect(nextRun({ hour: 9, minute: 0 }, 'America/Toronto', at)?.toISOString()).toBe('2026-03-20T13:00:00.000Z');
    expect(nextRun({ hour: 7 }, 'America/Toronto', at)?.toISOString()).toBe('2026-03-21T11:00:00.000Z');
    expect(nextRun({ hour: 9, weekday: 1 }, 'America/Toronto', at)?.toISOString()).toBe('2026-03-23T13:00:00.000Z');
    expect(nextRun({ month: 1, day: 1 }, 'UTC', at)?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(nextRun({ month: 2, day: 29, hour: 6 }, 'UTC', at)?.toISOString()).toBe('2028-02-29T06:00:00.000Z');
    // Go's "every minute": daily at 00:00
    expect(nextRun({}, 'UTC', at)?.toISOString()).toBe('2026-03-21T00:00:00.000Z');
    expect(nextRun({ month: 4, day: 31 }, 'UTC', at)).toBeNull();
  });

  it('is always strictly later than the time it is asked after', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2020-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }),
        fc.record({ hour: fc.integer({ min: 0, max: 23 }), minute: fc.integer({ min: 0, max: 59 }) }),
        fc.constantFrom('UTC', 'America/Toronto', 'Europe/London', 'Asia/Kolkata'),
        (after, schedule, zone) => {
          const next = nextRun(schedule, zone, after)!;
          return next > after && next.getTime() - after.getTime() <= 26 * 3_600_000;
        },
      ),
    );
  });

  it("is described and its remaining time written as Go's String() methods wrote them", () => {
    expect(describeGoSchedule({ hour: 9, minute: 0 })).toBe('schedule([minute=0 hour=9])');
    expect(describeGoSchedule({ weekday: 1, hour: 18 })).toBe('schedule([hour=18 weekday=Monday])');
    expect(describeGoSchedule({})).toBe('every minute');
    expect([0, -5, 250, 1500, 300_000, 3_600_000, 93_784_004].map(goDuration)).toEqual([
      '0s',
      '0s',
      '250ms',
      '1.5s',
      '5m0s',
      '1h0m0s',
      '26h3m4.004s',
    ]);
  });
});
