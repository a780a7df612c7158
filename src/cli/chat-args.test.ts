import { describe, expect, it } from 'vitest';
import { parseChatArgs } from './chat-args.ts';

describe('parseChatArgs', () => {
  it('reads the flags, with defaults from the environment', () => {
    const parsed = parseChatArgs(['--phone', '+14165550123', '--timezone', 'UTC', '--flow', 'assistant'], {
      PROMPTPIPE_URL: 'http://127.0.0.1:9000/',
      API_TOKEN: 't',
    });
    expect(parsed).toEqual({
      ok: true,
      args: {
        phone: '+14165550123',
        name: undefined,
        timezone: 'UTC',
        flow: 'assistant',
        url: 'http://127.0.0.1:9000',
        token: 't',
        embedded: false,
      },
    });
  });

  it('explains what is wrong', () => {
    expect(parseChatArgs([], {})).toEqual({ ok: false, help: false, problem: '--phone is required' });
    expect(parseChatArgs(['--phone', '1', '--url', 'ftp://x'], {})).toMatchObject({
      ok: false,
      problem: expect.stringContaining('--url must be'),
    });
    expect(parseChatArgs(['--phone', '1', '--colour'], {})).toMatchObject({
      ok: false,
      problem: expect.stringContaining('--colour'),
    });
    expect(parseChatArgs(['--help'], {})).toEqual({ ok: false, help: true });
  });
});
