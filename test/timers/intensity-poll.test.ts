import { afterEach, describe, expect, it } from 'vitest';
import { INTENSITY_POLL_QUESTION } from '../../src/flows/habit-coach/polls.ts';
import { isGenerator, startHabitFixture, type HabitFixture } from './habit-fixture.ts';

// Spec 002 §9 scenario 8 and BEHAVIOR-NOTES "Polls" / "Timers": intensity moves one step per
// answer, clamped; the poll leaves out the impossible move; at most one poll per participant-local day.
let fixture: HabitFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const intensityPolls = () =>
  fixture!.messages().filter((message) => message.poll?.question === INTENSITY_POLL_QUESTION);

describe('scenario 8: intensity adjustment', () => {
  it(
    '8: each answer moves intensity one step (by label, number or synonym), clamped, and the poll omits the ' +
      'impossible move',
    async () => {
      fixture = await startHabitFixture({ clockStart: '2026-06-01T12:00:00Z', phone: '+14165550301' });
      await fixture.say('set me up');
      const day = async (answer: string) => {
        await fixture!.advance('1d'); // the 07:50 prompt (11:50Z) and its polls; the clock stops at 12:00Z
        const options = intensityPolls().at(-1)!.poll!.options;
        const generatorSaw = fixture!.provider.requests
          .filter(isGenerator)
          .at(-1)!
          .messages.at(-1)!
          .content.match(/Intensity: (\w+)/)![1];
        await fixture!.say(answer);
        return { options, generatorSaw, after: (await fixture!.state()).profile.intensity as string };
      };

      expect(await day('5')).toEqual({
        options: ['Decrease', 'Keep', 'Increase'],
        generatorSaw: 'normal',
        after: 'high',
      }); // Done 1-2, then 3-5
      expect(await day('Increase')).toEqual({ options: ['Decrease', 'Keep'], generatorSaw: 'high', after: 'high' });
      expect(await day('decrease')).toEqual({ options: ['Decrease', 'Keep'], generatorSaw: 'high', after: 'normal' });
      expect(await day('Decrease.')).toEqual({
        options: ['Decrease', 'Keep', 'Increase'],
        generatorSaw: 'normal',
        after: 'low',
      });
      expect(await day('less')).toEqual({ options: ['Keep', 'Increase'], generatorSaw: 'low', after: 'low' });
      // "2" picks "Not yet" in the Done poll first.
      expect(await day('2')).toEqual({ options: ['Keep', 'Increase'], generatorSaw: 'low', after: 'low' });

      // The answer also reaches the model as ordinary text.
      expect(fixture.provider.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: 'user', content: '2' });
    },
  );

  // Both schedules fire at the same instants: 22:50 and 00:20 in Auckland (NZST, UTC+12), i.e.
  // 10:50Z and 12:20Z. Two prompts on one UTC date fall on two Auckland dates, and the 00:20
  // prompt shares its Auckland date with the next day's 22:50 one although their UTC dates differ.
  it.each([
    [
      "in the participant's zone",
      [
        { type: 'fixed', fixed_time: '23:00' },
        { type: 'fixed', fixed_time: '00:30' },
      ],
    ],
    [
      'pinned to UTC',
      [
        { type: 'fixed', fixed_time: '11:00', timezone: 'UTC' },
        { type: 'fixed', fixed_time: '12:30', timezone: 'UTC' },
      ],
    ],
  ])(
    '8: the poll comes at most once per participant-local day, not per UTC day (schedules %s)',
    async (_label, schedules) => {
      fixture = await startHabitFixture({
        clockStart: '2026-06-01T00:00:00Z',
        phone: '+64211234567',
        timezone: 'Pacific/Auckland',
        schedules,
      });
      await fixture.say('set me up');
      await fixture.advance('2026-06-02T13:00:00Z');
      expect(fixture.prompts().map((message) => message.createdAt.toISOString())).toEqual([
        '2026-06-01T10:50:00.000Z',
        '2026-06-01T12:20:00.000Z',
        '2026-06-02T10:50:00.000Z',
        '2026-06-02T12:20:00.000Z',
      ]);
      // Auckland dates of those prompts: 1 June, 2 June, 2 June, 3 June.
      expect(intensityPolls().map((message) => message.createdAt.toISOString())).toEqual([
        '2026-06-01T10:50:00.000Z',
        '2026-06-01T12:20:00.000Z',
        '2026-06-02T12:20:00.000Z',
      ]);
    },
  );
});
