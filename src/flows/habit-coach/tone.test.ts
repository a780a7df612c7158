import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ToneState } from '../../core/profile.ts';
import { buildToneGuide, normalizeToneTags, TONE_TAGS, updateTone, type ToneProposal } from './tone.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const minutes = (n: number) => new Date(T0.getTime() + n * 60_000);
const fresh: ToneState = { scores: {}, active: [], lastUpdatedAt: null };
const implicit = (...tags: ToneProposal['tags']): ToneProposal => ({ tags, source: 'implicit' });
const explicit = (...tags: ToneProposal['tags']): ToneProposal => ({ tags, source: 'explicit' });

/** Applies proposals four minutes apart, returning every intermediate state. */
function replay(start: ToneState, proposals: ToneProposal[]): ToneState[] {
  const states: ToneState[] = [];
  let state = start;
  proposals.forEach((proposal, i) => {
    state = updateTone(state, proposal, minutes(4 * (i + 1))).state;
    states.push(state);
  });
  return states;
}

describe('normalizeToneTags', () => {
  it('lowercases, trims, drops unknown tags and dedupes keeping the first order', () => {
    expect(normalizeToneTags([' Concise ', 'sarcastic', 'warm_supportive', 'CONCISE', 'casual'])).toEqual([
      'concise',
      'warm_supportive',
      'casual',
    ]);
  });
});

describe('updateTone', () => {
  it('follows the reference sequence for repeated implicit observations', () => {
    const states = replay(
      fresh,
      Array.from({ length: 8 }, () => implicit('concise')),
    );
    expect(states.map((s) => s.scores.concise)).toEqual([0.15, 0.2775, 0.3859, 0.478, 0.5563, 0.6229, 0.6795, 0.7276]);
    expect(states.map((s) => s.active.includes('concise'))).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      true,
    ]);
  });

  it('decays an unobserved active tag and deactivates it at the sixth update (0.3771)', () => {
    const start: ToneState = { scores: { concise: 1 }, active: ['concise'], lastUpdatedAt: null };
    const states = replay(
      start,
      Array.from({ length: 6 }, () => implicit('casual')),
    );
    expect(states.map((s) => s.scores.concise)).toEqual([0.85, 0.7225, 0.6141, 0.522, 0.4437, 0.3771]);
    expect(states.map((s) => s.active.includes('concise'))).toEqual([true, true, true, true, true, false]);
  });

  it('rate-limits implicit updates within 3 minutes and applies them after (scenario 12)', () => {
    const start: ToneState = { scores: { concise: 0.8 }, active: ['concise'], lastUpdatedAt: T0 };
    const early = updateTone(start, { ...implicit('concise', 'warm_supportive'), confidence: 0.9 }, minutes(2));
    expect(early).toEqual({ state: start, outcome: 'rate-limited' });

    const later = updateTone(start, { ...implicit('concise', 'warm_supportive'), confidence: 0.9 }, minutes(4));
    expect(later.outcome).toBe('applied');
    expect(later.state.scores).toEqual({ concise: 0.83, warm_supportive: 0.15 });
    expect(later.state.active).toEqual(['concise']);
    expect(later.state.lastUpdatedAt).toEqual(minutes(4));
  });

  it('applies explicit updates immediately, setting observed tags to 1.0', () => {
    const start: ToneState = { scores: { concise: 0.5, casual: 0.3 }, active: [], lastUpdatedAt: minutes(0) };
    const { state, outcome } = updateTone(start, explicit('concise'), minutes(1));
    expect(outcome).toBe('applied');
    expect(state.scores).toEqual({ concise: 1, casual: 0.3 });
    expect(state.active).toEqual(['concise']);
  });

  it('records nothing when nothing changes, so the rate-limit clock does not move', () => {
    const start: ToneState = { scores: { concise: 1 }, active: ['concise'], lastUpdatedAt: T0 };
    expect(updateTone(start, explicit('concise'), minutes(1))).toEqual({ state: start, outcome: 'unchanged' });
    expect(updateTone(start, explicit(), minutes(1))).toEqual({ state: start, outcome: 'empty' });
  });

  it('no_emojis at 0.7 or more forces emojis_ok to 0', () => {
    const start: ToneState = { scores: { emojis_ok: 1 }, active: ['emojis_ok'], lastUpdatedAt: null };
    const { state } = updateTone(start, explicit('no_emojis'), T0);
    expect(state.scores).toEqual({ no_emojis: 1, emojis_ok: 0 });
    expect(state.active).toEqual(['no_emojis']);
  });

  it('drops the lower of an exclusive pair to 0.39; a tie keeps the first of the pair', () => {
    const start: ToneState = {
      scores: { concise: 0.9, casual: 0.8 },
      active: ['concise', 'casual'],
      lastUpdatedAt: null,
    };
    const higher = updateTone(start, explicit('detailed', 'formal'), T0).state;
    expect(higher.scores).toMatchObject({ concise: 0.39, detailed: 1, formal: 1, casual: 0.39 });
    expect(higher.active).toEqual(['detailed', 'formal']);

    const tie = updateTone(fresh, explicit('gentle_coach', 'direct_coach'), T0).state;
    expect(tie.scores).toMatchObject({ direct_coach: 1, gentle_coach: 0.39 });
    expect(tie.active).toEqual(['direct_coach']);
  });

  it('keeps scores in [0, 1] with 4 decimals, the active set consistent with hysteresis, in whitelist order', () => {
    const tag = fc.constantFrom(...TONE_TAGS);
    const proposal = fc.record({
      tags: fc.uniqueArray(tag, { maxLength: 5 }),
      source: fc.constantFrom('explicit' as const, 'implicit' as const),
    });
    fc.assert(
      fc.property(fc.array(fc.tuple(proposal, fc.integer({ min: 0, max: 10 })), { maxLength: 30 }), (steps) => {
        let state = fresh;
        let now = T0.getTime();
        for (const [p, gapMinutes] of steps) {
          now += gapMinutes * 60_000;
          const previous = state;
          state = updateTone(state, p, new Date(now)).state;
          for (const score of Object.values(state.scores)) {
            expect(score).toBeGreaterThanOrEqual(0);
            expect(score).toBeLessThanOrEqual(1);
            expect(Math.round(score * 10_000) / 10_000).toBe(score);
          }
          for (const t of TONE_TAGS) {
            const score = state.scores[t] ?? 0;
            if (score >= 0.7) expect(state.active).toContain(t);
            if (score <= 0.4) expect(state.active).not.toContain(t);
            if (score > 0.4 && score < 0.7) expect(state.active.includes(t)).toBe(previous.active.includes(t));
          }
          expect(state.active).toEqual(TONE_TAGS.filter((t) => state.active.includes(t)));
          // Hysteresis can leave both of a pair active (a decaying 0.61 next to a fresh 1.0);
          // never both at 0.7 or more.
          expect((state.scores.concise ?? 0) >= 0.7 && (state.scores.detailed ?? 0) >= 0.7).toBe(false);
        }
      }),
    );
  });
});

describe('buildToneGuide', () => {
  it('is empty when no tag is active', () => {
    expect(buildToneGuide({ active: [], scores: { concise: 0.5 } })).toBe('');
  });

  it('has one line per tag, a neutral stance line when no stance is active, and always the no-mirroring line', () => {
    const guide = buildToneGuide({ active: ['no_emojis', 'concise'], scores: { concise: 1, no_emojis: 1 } });
    const lines = guide.split('\n');
    expect(lines).toHaveLength(1 + 2 + 1 + 1);
    expect(lines[1]).toMatch(/short/);
    expect(lines[2]).toMatch(/emoji/);
    expect(guide).toMatch(/neutral, friendly stance/);
    expect(guide).toMatch(/Never mirror hostility/);

    const withStance = buildToneGuide({ active: ['warm_supportive'], scores: { warm_supportive: 0.8 } });
    expect(withStance).not.toMatch(/neutral, friendly stance/);
    expect(withStance).toMatch(/Never mirror hostility/);
  });

  it('follows the higher score when hysteresis leaves both tags of a pair active', () => {
    const guide = buildToneGuide({ active: ['concise', 'detailed'], scores: { concise: 1, detailed: 0.61 } });
    expect(guide).toMatch(/short/);
    expect(guide).not.toMatch(/fuller explanations/);
  });
});
