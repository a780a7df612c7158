import { describe, expect, it } from 'vitest';
import { offlineHabitPolicy } from '../../flows/habit-coach/offline-policy.ts';
import { offlineDeskStep } from '../../flows/service-desk/offline-policy.ts';
import { ROLE } from '../../flows/service-desk/desk-prompts.ts';
import type { LlmRequest } from '../llm-provider.ts';
import { offlineStep } from './offline-demo-provider.ts';

const request = (system: string, user: string): LlmRequest => ({
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ],
});

describe("the offline demo model, composed from the flow modules' policies", () => {
  it('gives a marked request to the flow that marks it, whatever the order of the policies', () => {
    const desk = request(`${ROLE.acknowledge}\nBe brief.`, 'I want to cancel my appointment');
    expect(offlineStep([offlineHabitPolicy, offlineDeskStep], desk).text).toBe(
      "Okay, let's sort out that cancellation.",
    );
  });

  it('gives unmarked requests to the habit coach, and says so plainly when no flow knows a request', () => {
    expect(offlineStep([offlineHabitPolicy, offlineDeskStep], request('You are a habit coach.', 'hello')).text).toMatch(
      /habit/i,
    );
    expect(offlineStep([offlineHabitPolicy, offlineDeskStep], request('[other-flow:step]', 'hello')).text).toMatch(
      /no rules for this conversation/,
    );
  });
});
