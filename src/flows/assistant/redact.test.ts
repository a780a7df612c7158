import { describe, expect, it } from 'vitest';
import { MAX_INPUT_CHARACTERS, redact } from './redact.ts';

describe('redact', () => {
  it.each([
    ['mail me at jane.doe+work@example.co.uk please', 'mail me at [email] please', 'email'],
    ['card 4111 1111 1111 1111 exp 12/29', 'card [card] exp 12/29', 'card'],
    ['amex 3782-822463-10005', 'amex [card]', 'card'],
    ['key sk-proj-abcdefghijklmnop1234 works', 'key [api-token] works', 'api-token'],
    ['use ghp_abcdefghijklmnopqrstuvwxyz0123 now', 'use [api-token] now', 'api-token'],
    ['Authorization: Bearer abc.def-ghi_jkl.mno123456', 'Authorization: Bearer [api-token]', 'api-token'],
    [
      'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok',
      'token [jwt] ok',
      'jwt',
    ],
    ['login with password=hunter2! today', 'login with password=[secret] today', 'secret'],
    ['API_KEY: "abc def"', 'API_KEY: [secret]', 'secret'],
    ['export DB_PASSWORD=hunter2', 'export DB_PASSWORD=[secret]', 'secret'],
    ['GITHUB_TOKEN=abc123xyz', 'GITHUB_TOKEN=[secret]', 'secret'],
    ['aws_secret_access_key = wJalrXUtnFEMI/K7MDENG', 'aws_secret_access_key = [secret]', 'secret'],
    ['stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc', 'stripe [api-token]', 'api-token'],
    ['sha d41d8cd98f00b204e9800998ecf8427e', 'sha [hex]', 'hex'],
    ['my verification code is 482913', 'my verification code is [one-time-code]', 'one-time-code'],
    ['829104 is your login code', '[one-time-code] is your login code', 'one-time-code'],
    ['your OTP 482913', 'your OTP [one-time-code]', 'one-time-code'],
    ['{"password": "hunter2"}', '{"password": [secret]}', 'secret'],
    ["{'api_key': 'abc123def456'}", "{'api_key': [secret]}", 'secret'],
    ['my password is hunter2', 'my password is [secret]', 'secret'],
    ['Authorization: Basic dXNlcjpwYXNz', 'Authorization: Basic [api-token]', 'api-token'],
    ['post to https://hooks.slack.com/services/T000/B000/XXXX', 'post to [api-token]', 'api-token'],
    ['card 4111-1111-1111-1111', 'card [card]', 'card'],
    ['card 4111111111111111.', 'card [card].', 'card'],
    ['Your verification code 123456', 'Your verification code [one-time-code]', 'one-time-code'],
    ['PIN 1234 please', 'PIN [one-time-code] please', 'one-time-code'],
    ['my password is: hunter2', 'my password is: [secret]', 'secret'],
    ['key my-key-d41d8cd98f00b204e9800998ecf8427e', 'key my-key-[hex]', 'hex'],
    [
      'JWT-eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      'JWT-[jwt]',
      'jwt',
    ],
  ])('%s', (input, expected, kind) => {
    const result = redact(input);
    expect(result.text).toBe(expected);
    expect(result.counts[kind as keyof typeof result.counts]).toBe(1);
  });

  it('leaves ordinary numbers, times, phone numbers and prices alone', () => {
    const text = 'Call +1 415 555 0100 at 10:30 on 2026-11-23, it costs $1,299 and takes 45 minutes';
    expect(redact(text)).toEqual({ text, counts: {}, truncated: false });
  });

  it.each([
    ['+86 138 0013 8000'],
    ['+55 11 91234 5678'],
    ['0044 20 7946 0958'],
    ['order 111-2223334-5556667'],
    ['from 2026-11-23 2026-11-24'],
    ['10 20 30 40 50 60 70'],
    ['id 550e8400-e29b-41d4-a716-446655440000'],
    ['tracking 1Z999AA10123456784 and 9400111899223344556677'],
    ['at 1732360000000 ms'],
    ['zip code 94103'],
    ['the verification deadline is March 2026'],
    ['code review for PR 4521'],
    ['pin the meeting to 1530'],
    ['2025 is your year'],
    ['I want some basic stretching routines'],
    ['I lost my token yesterday'],
    ['the password is required'],
    ['my zip code is 90210'],
    ['delete note_01a4111111111111111f704556fd0aec'],
    ['ref A4111111111111111 and 4111111111111111x'],
  ])('leaves %s alone', (text) => {
    expect(redact(text)).toEqual({ text, counts: {}, truncated: false });
  });

  it('cuts very long runs of word characters (the rules only ever see the first 8,512 characters)', () => {
    for (const text of [
      'a'.repeat(160_000),
      'a_'.repeat(80_000),
      `${'a.'.repeat(40_000)}@`,
      'x'.repeat(8_000) + '@' + 'y'.repeat(8_000),
    ]) {
      expect(redact(text).truncated).toBe(true);
    }
  });

  it('collapses whitespace before it counts characters, so indented text is not cut early', () => {
    const result = redact(`${'line\n        '.repeat(800)}THE END`);
    expect(result.truncated).toBe(false);
    expect(result.text.endsWith('THE END')).toBe(true);
  });

  it('is idempotent, so a message redacted as it arrived can be redacted again', () => {
    const once = redact('mail jane@example.com password=x ' + '🙂'.repeat(MAX_INPUT_CHARACTERS)).text;
    expect(redact(once).text).toBe(once);
  });

  it('collapses whitespace', () => {
    expect(redact('  a \n\n b\t\tc  ').text).toBe('a b c');
  });

  it('caps the input and says so', () => {
    const result = redact('x'.repeat(MAX_INPUT_CHARACTERS + 50));
    expect(result.truncated).toBe(true);
    expect(result.text.startsWith('x'.repeat(MAX_INPUT_CHARACTERS) + ' [Note:')).toBe(true);
    expect(result.text).toContain('8,000 characters');
    expect(redact('x'.repeat(MAX_INPUT_CHARACTERS)).truncated).toBe(false);
    // Counted in characters, not UTF-16 units: 8,000 emoji are not cut.
    expect(redact('🙂'.repeat(MAX_INPUT_CHARACTERS)).truncated).toBe(false);
  });
});
