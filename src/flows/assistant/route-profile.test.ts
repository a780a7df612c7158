import { describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../llm/scripted-provider.ts';
import { loadProfiles, SHIPPED_PROFILES_DIR } from './profiles.ts';
import { pickProfile, routeProfile } from './route-profile.ts';

const set = loadProfiles(SHIPPED_PROFILES_DIR, 'life');
const names = (answer: string) => pickProfile(set, answer);

describe('pickProfile', () => {
  it('takes an exact name, quoted or not', () => {
    expect(names('developer')).toMatchObject({ profile: { name: 'developer' }, how: 'exact' });
    expect(names(' "Business". ')).toMatchObject({ profile: { name: 'business' }, how: 'exact' });
  });

  it('else the profile named first in the answer', () => {
    expect(names('I would say business, or maybe developer')).toMatchObject({
      profile: { name: 'business' },
      how: 'named',
    });
    expect(names('Profile: developer (not life)')).toMatchObject({ profile: { name: 'developer' }, how: 'named' });
  });

  it('else the default', () => {
    expect(names('no idea')).toMatchObject({ profile: { name: 'life' }, how: 'default' });
    expect(names('developers')).toMatchObject({ profile: { name: 'life' }, how: 'default' });
  });
});

describe('routeProfile', () => {
  const options = { model: 'small', timeoutMs: 50, signal: new AbortController().signal };

  it('asks with every profile described, on the lighter model', async () => {
    const provider = createScriptedProvider([{ text: 'developer' }]);
    const result = await routeProfile(set, 'why does my build fail', { ...options, provider });
    expect(result).toMatchObject({ profile: { name: 'developer' }, how: 'exact' });
    expect(provider.requests[0]!.model).toBe('small');
    expect(provider.requests[0]!.messages[0]!.content).toContain('- business: Work and business');
  });

  it('falls back to the default on an error or a timeout, without failing', async () => {
    const failing = createScriptedProvider([{ error: new Error('boom') }]);
    expect(await routeProfile(set, 'x', { ...options, provider: failing })).toMatchObject({
      profile: { name: 'life' },
      how: 'failed',
    });
    const slow = createScriptedProvider([{ delayMs: 5_000, text: 'developer' }]);
    expect(await routeProfile(set, 'x', { ...options, provider: slow })).toMatchObject({
      profile: { name: 'life' },
      how: 'failed',
    });
  });

  it("lets the turn's own abort through", async () => {
    const controller = new AbortController();
    controller.abort(new Error('barge-in'));
    const provider = createScriptedProvider([{ text: 'developer' }]);
    await expect(routeProfile(set, 'x', { ...options, provider, signal: controller.signal })).rejects.toThrow(
      'barge-in',
    );
  });
});
