import type { LlmProvider } from '../../llm/llm-provider.ts';
import { ASSISTANT_MARKERS } from './markers.ts';
import type { AssistantProfile, ProfileSet } from './profiles.ts';

export interface RouteOptions {
  provider: LlmProvider;
  /** A lighter model for this call, when configured. */
  model: string | undefined;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface RouteResult {
  profile: AssistantProfile;
  /**
   * `exact`: the answer was a name; `named`: the first name in the answer; `default`: neither;
   * `failed`: the call failed or timed out.
   */
  how: 'exact' | 'named' | 'default' | 'failed';
  answer: string | null;
}

/**
 * Picks the persona for a request with one short model call (spec 003, "Profile Selection").
 * A timeout or error falls back to the default profile; only the turn's own abort propagates.
 */
export async function routeProfile(set: ProfileSet, request: string, options: RouteOptions): Promise<RouteResult> {
  if (set.profiles.length === 1) return { profile: set.fallback, how: 'default', answer: null };
  const signal = AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]);
  try {
    const response = await options.provider.complete(
      {
        messages: [
          { role: 'system', content: routerPrompt(set) },
          { role: 'user', content: request },
        ],
        model: options.model,
        temperature: 0,
        maxOutputTokens: 20,
      },
      { signal },
    );
    return { ...pickProfile(set, response.text), answer: response.text };
  } catch {
    options.signal.throwIfAborted();
    return { profile: set.fallback, how: 'failed', answer: null };
  }
}

export function routerPrompt(set: ProfileSet): string {
  const lines = set.profiles.map((p) => `- ${p.name}: ${p.description}`);
  return [
    `${ASSISTANT_MARKERS.route} Choose the assistant profile that best fits the user's request.`,
    'Profiles:',
    ...lines,
    'Answer with the profile name only.',
  ].join('\n');
}

/** The exact name; else the profile named first in the answer; else the default. */
export function pickProfile(set: ProfileSet, answer: string): Pick<RouteResult, 'profile' | 'how'> {
  const normalized = answer
    .trim()
    .toLowerCase()
    .replace(/^["'`*\s]+|["'`*.!\s]+$/g, '');
  const exact = set.byName.get(normalized);
  if (exact) return { profile: exact, how: 'exact' };
  let first: { profile: AssistantProfile; index: number } | null = null;
  for (const profile of set.profiles) {
    const index = answer.toLowerCase().search(new RegExp(`(?<![a-z0-9_-])${profile.name}(?![a-z0-9_-])`));
    if (index >= 0 && (!first || index < first.index)) first = { profile, index };
  }
  return first ? { profile: first.profile, how: 'named' } : { profile: set.fallback, how: 'default' };
}
