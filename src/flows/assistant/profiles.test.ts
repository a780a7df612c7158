import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/config-error.ts';
import { loadProfiles, SHIPPED_PROFILES_DIR } from './profiles.ts';

function directory(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'promptpipe-profiles-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}
const profile = (patch: object = {}) =>
  JSON.stringify({
    name: 'coach',
    description: 'Coaching.',
    systemPrompt: 'Be kind.',
    tools: ['calculator'],
    ...patch,
  });
const problems = (dir: string, fallback = 'coach') => {
  try {
    loadProfiles(dir, fallback);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
};

describe('loadProfiles', () => {
  it('loads the shipped profiles in name order', () => {
    const set = loadProfiles(SHIPPED_PROFILES_DIR, 'life');
    expect(set.profiles.map((p) => p.name)).toEqual(['business', 'developer', 'life']);
    expect(set.fallback.name).toBe('life');
  });

  it('names the file and the field of every problem', () => {
    const dir = directory({
      'a.json': profile({ tools: ['shell'] }),
      'b.json': '{ not json',
      'c.json': profile({ tools: ['calculator', 'calculator'] }),
      'd.json': profile({ name: 'Bad Name' }),
      'e.json': profile({ extra: true }),
      'notes.txt': 'ignored',
    });
    const found = problems(dir);
    expect(found).toHaveLength(5);
    expect(found[0]).toMatch(/^ASSISTANT_PROFILES_DIR: a\.json: tools\.0: /);
    expect(found[1]).toMatch(/^ASSISTANT_PROFILES_DIR: b\.json: not valid JSON/);
    expect(found[2]).toBe('ASSISTANT_PROFILES_DIR: c.json: tools: each tool at most once');
    expect(found[3]).toMatch(/^ASSISTANT_PROFILES_DIR: d\.json: name: /);
    expect(found[4]).toMatch(/^ASSISTANT_PROFILES_DIR: e\.json: .*extra/);
  });

  it('refuses two profiles of one name, an empty directory, a missing one and an unknown default', () => {
    expect(problems(directory({ 'a.json': profile(), 'b.json': profile() }))).toEqual([
      'ASSISTANT_PROFILES_DIR: b.json: a second profile named "coach"',
    ]);
    expect(problems(directory({}))).toEqual([expect.stringMatching(/holds no \*\.json profile$/)]);
    expect(problems('/nonexistent/profiles')).toEqual([
      expect.stringMatching(/^ASSISTANT_PROFILES_DIR: cannot read the directory/),
    ]);
    expect(problems(directory({ 'a.json': profile() }), 'life')).toEqual([
      'ASSISTANT_DEFAULT_PROFILE: no profile named "life" (have: coach)',
    ]);
  });

  it('says which built-in tools wait for a yes: delete_note unless a profile says otherwise; names only tools', () => {
    const set = loadProfiles(
      directory({ 'a.json': profile(), 'b.json': profile({ name: 'open', needsApproval: [] }) }),
      'coach',
    );
    expect(set.byName.get('coach')!.needsApproval).toEqual(['delete_note']);
    expect(set.byName.get('open')!.needsApproval).toEqual([]);
    const found = problems(directory({ 'a.json': profile({ needsApproval: ['rm_rf'] }) }));
    expect(found).toEqual([expect.stringMatching(/^ASSISTANT_PROFILES_DIR: a\.json: needsApproval\.0: /)]);
    expect(problems(directory({ 'a.json': profile({ needsApproval: 'delete_note' }) }))).toEqual([
      expect.stringMatching(/^ASSISTANT_PROFILES_DIR: a\.json: needsApproval: /),
    ]);
  });
});
