import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, maskPhone, REDACTED, redactPaths } from './logger.ts';

/** A logger writing JSON lines into memory, and the parsed lines. */
function memoryLogger(redact: boolean, level = 'info') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ level, redact, destination });
  return {
    logger,
    records: () =>
      lines
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
  };
}

const PHONE = '+14165550123';
const SAMPLE = {
  phone: PHONE,
  text: 'I smoked again today',
  apiKey: 'sk-live-123',
  participant: { phoneNumber: PHONE, name: 'Alice', id: 'p_1' },
  delivery: { to: PHONE, body: { text: 'Keep going!' } },
  req: { method: 'POST', headers: { authorization: 'Bearer topsecret', 'x-api-key': 'k-1', host: 'localhost' } },
  llm: { apiKey: 'sk-nested', model: 'gpt-4o-mini' },
  messages: [{ role: 'user', content: 'my blood pressure is 150' }],
};

describe('createLogger', () => {
  it('writes JSON lines with an ISO time, the level and the message', () => {
    const { logger, records } = memoryLogger(true);
    logger.info({ participantId: 'p_1' }, 'turn finished');
    expect(records()).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'turn finished',
        participantId: 'p_1',
        time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      }),
    ]);
  });

  it('redacts phone numbers, message text and secrets when redact is on', () => {
    const { logger, records } = memoryLogger(true);
    logger.info(SAMPLE, 'inbound');
    const [record] = records();
    const output = JSON.stringify(record);
    for (const hidden of [PHONE, 'smoked', 'Keep going', 'blood pressure', 'sk-live', 'sk-nested', 'topsecret', 'k-1'])
      expect(output).not.toContain(hidden);
    expect(record).toMatchObject({
      phone: REDACTED,
      text: REDACTED,
      apiKey: REDACTED,
      participant: { phoneNumber: REDACTED, name: 'Alice', id: 'p_1' },
      delivery: { to: REDACTED, body: { text: REDACTED } },
      req: { method: 'POST', headers: { authorization: REDACTED, 'x-api-key': REDACTED, host: 'localhost' } },
      llm: { apiKey: REDACTED, model: 'gpt-4o-mini' },
      messages: [{ role: 'user', content: REDACTED }],
      msg: 'inbound',
    });
  });

  it('redacts secrets but keeps personal data when redact is off', () => {
    const { logger, records } = memoryLogger(false);
    logger.info(SAMPLE, 'inbound');
    const [record] = records();
    expect(record).toMatchObject({
      phone: PHONE,
      text: 'I smoked again today',
      apiKey: REDACTED,
      participant: { phoneNumber: PHONE },
      req: { headers: { authorization: REDACTED, 'x-api-key': REDACTED, host: 'localhost' } },
      llm: { apiKey: REDACTED },
      messages: [{ content: 'my blood pressure is 150' }],
    });
  });

  it('redacts child bindings and keeps error messages readable', () => {
    const { logger, records } = memoryLogger(true);
    logger
      .child({ from: PHONE, authorization: 'Bearer t' })
      .error({ err: new Error('store unavailable') }, 'turn failed');
    const [record] = records();
    expect(record).toMatchObject({ from: REDACTED, authorization: REDACTED, err: { message: 'store unavailable' } });
  });

  it('logs an error with its stack and the errors that caused it', () => {
    const { logger, records } = memoryLogger(true);
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    logger.error({ err: new Error('the database cannot be reached', { cause }) }, 'turn failed');
    const [record] = records();
    expect(record.err.type).toBe('Error');
    expect(record.err.message).toContain('the database cannot be reached');
    expect(record.err.message).toContain('ECONNREFUSED'); // pino joins the causes' messages
    expect(record.err.stack).toMatch(/the database cannot be reached\n\s+at /);
    expect(record.err.stack).toContain('caused by: Error: connect ECONNREFUSED');
  });

  it('honours the level and creates independent loggers', () => {
    const quiet = memoryLogger(true, 'warn');
    const loud = memoryLogger(true, 'debug');
    quiet.logger.info('not written');
    loud.logger.debug('written');
    expect(quiet.records()).toEqual([]);
    expect(loud.records()).toHaveLength(1);
  });

  it('always includes the secret paths, and the personal ones only when redacting', () => {
    expect(redactPaths(false)).toEqual(expect.arrayContaining(['apiKey', '*.apiKey', 'authorization']));
    expect(redactPaths(false)).not.toContain('phone');
    expect(redactPaths(true)).toEqual(
      expect.arrayContaining([...redactPaths(false), 'phone', '*.phoneNumber', '*.text', 'message']),
    );
  });
});

describe('maskPhone', () => {
  it('keeps the country and area code and the last four digits', () => {
    expect(maskPhone('+14165550123')).toBe('+1416…0123');
    expect(maskPhone('+44 20 7946 0958')).toBe('+4420…0958');
  });

  it('reveals at most two digits of short values', () => {
    expect(maskPhone('12345')).toBe('…45');
    expect(maskPhone('12')).toBe('…');
    expect(maskPhone('')).toBe('…');
  });
});
