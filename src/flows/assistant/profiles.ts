import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ConfigError } from '../../config/config-error.ts';
import { describeIssues } from '../../tools/define-tool.ts';

/** The built-in tools a profile may allow (MCP tools are added per request, decision 006). */
export const BUILT_IN_TOOL_NAMES = [
  'recall_conversation',
  'current_time',
  'calculator',
  'add_note',
  'list_notes',
  'delete_note',
] as const;
export type BuiltInToolName = (typeof BUILT_IN_TOOL_NAMES)[number];

/** Tools that change what the person keeps wait for their yes unless a profile says otherwise. */
export const DEFAULT_NEEDS_APPROVAL: readonly BuiltInToolName[] = ['delete_note'];

export const RECALL_TOOL: BuiltInToolName = 'recall_conversation';

const profileSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'lowercase letters, digits, - and _, starting with a letter'),
  /** What the router reads to pick the profile. */
  description: z.string().min(1).max(500),
  systemPrompt: z.string().min(1).max(20_000),
  tools: z
    .array(z.enum(BUILT_IN_TOOL_NAMES))
    .refine((tools) => new Set(tools).size === tools.length, 'each tool at most once'),
  /** Built-in tools whose calls wait for the person's yes (decision 022); `[]` = none. */
  needsApproval: z.array(z.enum(BUILT_IN_TOOL_NAMES)).default([...DEFAULT_NEEDS_APPROVAL]),
});

/** A persona: its system prompt and the tools it may use (spec 003, "Profiles"). */
export type AssistantProfile = z.infer<typeof profileSchema>;

export interface ProfileSet {
  profiles: readonly AssistantProfile[];
  byName: ReadonlyMap<string, AssistantProfile>;
  fallback: AssistantProfile;
}

export const SHIPPED_PROFILES_DIR = fileURLToPath(new URL('./profiles/', import.meta.url));

/**
 * Reads every `*.json` profile of `dir` (name order). Any problem stops start-up with a
 * `ConfigError` naming the file and the field: a study or product team edits these files.
 */
export function loadProfiles(dir: string, defaultName: string, variable = 'ASSISTANT_PROFILES_DIR'): ProfileSet {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((file) => file.endsWith('.json'))
      .sort();
  } catch (error) {
    throw new ConfigError([`${variable}: cannot read the directory ${dir} (${(error as Error).message})`]);
  }
  const problems: string[] = [];
  const profiles: AssistantProfile[] = [];
  for (const file of files) {
    const parsed = parseProfile(join(dir, file));
    if (typeof parsed === 'string') problems.push(`${variable}: ${file}: ${parsed}`);
    else if (profiles.some((p) => p.name === parsed.name))
      problems.push(`${variable}: ${file}: a second profile named "${parsed.name}"`);
    else profiles.push(parsed);
  }
  if (profiles.length === 0 && problems.length === 0) problems.push(`${variable}: ${dir} holds no *.json profile`);
  const byName = new Map(profiles.map((p) => [p.name, p]));
  const fallback = byName.get(defaultName);
  if (!fallback && problems.length === 0)
    problems.push(
      `ASSISTANT_DEFAULT_PROFILE: no profile named "${defaultName}" (have: ${[...byName.keys()].join(', ')})`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
  return { profiles, byName, fallback: fallback! };
}

function parseProfile(path: string): AssistantProfile | string {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return `not valid JSON (${(error as Error).message})`;
  }
  const result = profileSchema.safeParse(json);
  return result.success ? result.data : describeIssues(result.error);
}
