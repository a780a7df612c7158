import { describe, expect, it } from 'vitest';
import { readStateData } from './go-state-data.ts';

const state = (data: Record<string, unknown>) => JSON.stringify(data);
const schedules = (...registry: Array<Record<string, string>>) => state({ scheduleRegistry: JSON.stringify(registry) });

describe("a Go participant's state_data", () => {
  it("reads Go's empty map as empty: no row, '', null", () => {
    for (const text of [null, '', 'null']) expect(readStateData(text)).toEqual({ value: {} });
  });

  it("names every value that is not Go's string", () => {
    expect(readStateData(state({ conversationState: 3, lastHabitPrompt: null }))).toEqual({
      problems: [
        { field: 'flow_states.state_data.conversationState', message: 'must be a string (got 3)' },
        { field: 'flow_states.state_data.lastHabitPrompt', message: 'must be a string (got null)' },
      ],
    });
  });

  it('reads schedules as Go wrote them, times as HH:MM, and names what its scheduler would have refused', () => {
    const fixed = { id: 'sched_a', type: 'fixed', fixed_time: '8:05', timezone: 'america/toronto' };
    expect(readStateData(schedules(fixed))).toMatchObject({
      value: {
        scheduleRegistry: [{ goId: 'sched_a', kind: 'fixed', fixedTime: '08:05', timezone: 'America/Toronto' }],
      },
    });
    const late = { id: 'sched_b', type: 'random', random_start_time: '20:00', random_end_time: '19:00' };
    expect(readStateData(schedules({ id: 'sched_c', type: 'weekly' }, late, { id: 'sched_d', type: 'fixed' }))).toEqual(
      {
        problems: [
          {
            field: 'flow_states.state_data.scheduleRegistry[0].type',
            message: 'schedule sched_c: unknown type "weekly" (Go\'s are "fixed" and "random")',
          },
          {
            field: 'flow_states.state_data.scheduleRegistry[1].random_end_time',
            message: 'schedule sched_b: "19:00" is not after random_start_time "20:00"',
          },
          { field: 'flow_states.state_data.scheduleRegistry[2].fixed_time', message: 'schedule sched_d: is missing' },
        ],
      },
    );
  });

  it("names a history message's unreadable time and unknown role, a profile's bad count and intensity", () => {
    const history = { messages: [{ role: 'bot', content: 'hi', timestamp: 'yesterday' }] };
    const profile = { success_count: -1, total_prompts: 1.5, intensity: 'extreme' };
    const read = readStateData(
      state({ conversationHistory: JSON.stringify(history), userProfile: JSON.stringify(profile) }),
    );
    expect(read).toEqual({
      problems: [
        {
          field: 'flow_states.state_data.conversationHistory.messages[0].role',
          message: 'must be one of "user", "assistant", "system" (got "bot")',
        },
        {
          field: 'flow_states.state_data.conversationHistory.messages[0].timestamp',
          message: 'unreadable time "yesterday"',
        },
        { field: 'flow_states.state_data.userProfile.intensity', message: expect.stringMatching(/^must be one of /) },
        { field: 'flow_states.state_data.userProfile.success_count', message: 'must be a count, 0 or more' },
        { field: 'flow_states.state_data.userProfile.total_prompts', message: 'must be a whole number (got 1.5)' },
      ],
    });
  });

  it("reads Go's zero time as no time where Go leaves one unset", () => {
    const profile = { created_at: '0001-01-01T00:00:00Z', tone: { tone_last_updated_at: '0001-01-01T00:00:00Z' } };
    expect(readStateData(state({ userProfile: JSON.stringify(profile) }))).toEqual({
      value: { userProfile: { created_at: null, tone: { tone_last_updated_at: null } } },
    });
  });
});
