import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

// The Go PromptPipe's variable names, read as ours (legacy-names.ts), through loadConfig.
describe("the Go PromptPipe's variable names", () => {
  it('are read as ours, each with a one-line warning, ours winning where both are set', () => {
    const config = loadConfig({
      OPENAI_API_KEY: 'sk-go',
      GENAI_MODEL: 'gpt-4.1-mini',
      GENAI_TEMPERATURE: '0.1',
      API_ADDR: ':9090',
      DATABASE_DSN: 'file:/var/lib/promptpipe/app.db?_foreign_keys=on',
    });
    expect(config.llm).toMatchObject({
      provider: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-go',
      model: 'gpt-4.1-mini',
      temperature: 0.1,
    });
    expect(config.server.port).toBe(9090);
    expect(config.database.url).toBe('sqlite:/var/lib/promptpipe/app.db');
    expect(config.warnings).toEqual([
      "OPENAI_API_KEY is the Go PromptPipe's name: read as LLM_API_KEY and LLM_BASE_URL; rename it, this alias " +
        'will be removed',
      "GENAI_MODEL is the Go PromptPipe's name: read as LLM_MODEL; rename it, this alias will be removed",
      "GENAI_TEMPERATURE is the Go PromptPipe's name: read as LLM_TEMPERATURE; rename it, this alias will be removed",
      "API_ADDR is the Go PromptPipe's name: read as PORT; rename it, this alias will be removed",
      "DATABASE_DSN is the Go PromptPipe's name: read as DATABASE_URL; rename it, this alias will be removed",
    ]);
    expect(loadConfig({ LLM_MODEL: 'ours', GENAI_MODEL: 'theirs' })).toMatchObject({
      llm: { model: 'ours' },
      warnings: ['GENAI_MODEL is ignored: LLM_MODEL is set'],
    });
    expect(loadConfig({ API_ADDR: '0.0.0.0:8081', API_TOKEN: 'x'.repeat(16) }).server).toMatchObject({
      host: '0.0.0.0',
      port: 8081,
    });
    expect(loadConfig({ PROMPTPIPE_STATE_DIR: '/srv/pp/' }).database.url).toBe('sqlite:/srv/pp/promptpipe.sqlite');
    expect(loadConfig({ DATABASE_URL: 'file:/srv/pp/state.db' }).database.url).toBe('sqlite:/srv/pp/state.db');
  });

  it('reports a bad value under the Go name that was set, beside ours', () => {
    const issues = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return 'accepted';
      } catch (error) {
        return (error as ConfigError).issues.map((issue) => issue.split(': ')[0]);
      }
    };
    expect(issues({ API_ADDR: 'bogus', GENAI_TEMPERATURE: 'warm' })).toEqual([
      'PORT (read from API_ADDR)',
      'LLM_TEMPERATURE (read from GENAI_TEMPERATURE)',
    ]);
    expect(issues({ PORT: 'bogus', API_ADDR: ':9090' })).toEqual(['PORT']); // ours was set: the Go name is ignored
  });

  it('names a variable that looks like ours with the closest of ours', () => {
    expect(loadConfig({ PLATFORM_DEFAULT_SCHEDUL: '0 9 * * *' }).warnings).toEqual([
      'PLATFORM_DEFAULT_SCHEDUL is not a PromptPipe variable and is ignored; did you mean PLATFORM_DEFAULT_SCHEDULE?',
    ]);
    expect(loadConfig({ LLM_BASEURL: 'http://x/v1', PROMPTPIPE_DEBUGG: 'true', HOME: '/root' }).warnings).toEqual([
      'LLM_BASEURL is not a PromptPipe variable and is ignored; did you mean LLM_BASE_URL?',
      'PROMPTPIPE_DEBUGG is not a PromptPipe variable and is ignored; did you mean PROMPTPIPE_DEBUG?',
    ]);
  });
});

describe("DEFAULT_SCHEDULE, the Go PromptPipe's default cron for POST /schedule", () => {
  it('is read as PLATFORM_DEFAULT_SCHEDULE, with a warning; ours wins where both are set', () => {
    expect(loadConfig({ DEFAULT_SCHEDULE: '0 9 * * *' })).toMatchObject({
      platform: { defaultSchedule: { minute: 0, hour: 9 } },
      warnings: [
        "DEFAULT_SCHEDULE is the Go PromptPipe's name: read as PLATFORM_DEFAULT_SCHEDULE; rename it, this alias " +
          'will be removed',
      ],
    });
    expect(loadConfig({ DEFAULT_SCHEDULE: '0 9 * * *', PLATFORM_DEFAULT_SCHEDULE: '30 7 * * 1' })).toMatchObject({
      platform: { defaultSchedule: { minute: 30, hour: 7, weekday: 1 } },
      warnings: ['DEFAULT_SCHEDULE is ignored: PLATFORM_DEFAULT_SCHEDULE is set'],
    });
    expect(loadConfig({}).platform.defaultSchedule).toBeUndefined();
  });

  it('reads five fields, each one number in its range, day, month and weekday also *', () => {
    const read = (value: string) => loadConfig({ PLATFORM_DEFAULT_SCHEDULE: value }).platform.defaultSchedule;
    expect(read('0 9 * * *')).toEqual({ minute: 0, hour: 9 });
    expect(read(' 5  18 1 12 0 ')).toEqual({ minute: 5, hour: 18, day: 1, month: 12, weekday: 0 });
    expect(read('59 23 29 2 6')).toEqual({ minute: 59, hour: 23, day: 29, month: 2, weekday: 6 });
  });

  it('stops start-up naming the variable and the field where Go guessed or dropped the value', () => {
    const FROM_GO = 'PLATFORM_DEFAULT_SCHEDULE (read from DEFAULT_SCHEDULE): ';
    const problem = (value: string) => {
      try {
        loadConfig({ DEFAULT_SCHEDULE: value });
        return 'accepted';
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).issues;
      }
    };
    expect(problem('0 9 * *')).toEqual([
      FROM_GO +
        'must be five fields, minute hour day month weekday, like "0 9 * * *" ' +
        '(09:00 every day) (got "0 9 * *")',
    ]);
    expect(problem('0 9 * * 1-5')).toEqual([
      FROM_GO +
        'weekday "1-5" must be a number from 0 to 6 or * ' +
        '(ranges, lists and steps are not read) (got "0 9 * * 1-5")',
    ]);
    expect(problem('* 9 * * *')).toEqual([
      FROM_GO + 'minute must be a number: a schedule sends once a day, at its hour and minute ' + '(got "* 9 * * *")',
    ]);
    expect(problem('0 24 * * *')).toEqual([FROM_GO + 'hour 24 must be a number from 0 to 23 (got "0 24 * * *")']);
    expect(problem('0 9 31 4 *')).toEqual([FROM_GO + 'day 31 never comes in month 4 (got "0 9 31 4 *")']);
    expect(problem('0 9 0 * *')).toEqual([FROM_GO + 'day 0 must be a number from 1 to 31 or * (got "0 9 0 * *")']);
    expect(problem('0 9 */2 * *')).toEqual([
      FROM_GO +
        'day "*/2" must be a number from 1 to 31 or * ' +
        '(ranges, lists and steps are not read) (got "0 9 */2 * *")',
    ]);
  });
});
