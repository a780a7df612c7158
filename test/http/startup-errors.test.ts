import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/** Starts src/main.ts as a newcomer would, expecting it to refuse; resolves with its stderr. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  try {
    await run(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--experimental-strip-types', 'src/main.ts'],
      {
        env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:', ...env },
        timeout: 20_000,
      },
    );
    throw new Error('the server started');
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

// Each case starts a process (about 3 s on a quiet 2-core machine, several times that beside other work).
describe('start-up problems a newcomer causes', { timeout: 90_000 }, () => {
  it('say in one line which variable is wrong: a port in use, a database unreachable or nonexistent', async () => {
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const inUse = await refusedStart({ PORT: String(port) });
      expect(inUse).toEqual({
        code: 1,
        stderr:
          `PromptPipe cannot start: PORT ${port} is already in use on 127.0.0.1: ` +
          'stop the other server or set PORT\n',
      });
    } finally {
      taken.close();
    }
    const unreachable = await refusedStart({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none',
      DATABASE_CONNECT_TIMEOUT_MS: '2000',
    });
    expect(unreachable.stderr).toBe(
      'PromptPipe cannot start: DATABASE_URL: the database cannot be reached (connect ECONNREFUSED 127.0.0.1:9)\n',
    );
    // An address that takes the connection and never answers (a firewall dropping packets).
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const blackHoled = await refusedStart({
        DATABASE_URL: `postgres://postgres@127.0.0.1:${(silent.address() as AddressInfo).port}/none`,
        DATABASE_CONNECT_TIMEOUT_MS: '500',
      });
      expect(blackHoled).toEqual({
        code: 1,
        stderr:
          'PromptPipe cannot start: DATABASE_URL: ' +
          'the database did not answer within DATABASE_CONNECT_TIMEOUT_MS (500 ms)\n',
      });
    } finally {
      silent.close();
    }
    // A server that refuses what the URL asks for: SSL (sslmode=require), or the connection itself
    // (a FATAL error: no pg_hba.conf entry, no user name), answered before any query runs.
    const refusing = net.createServer((socket) =>
      socket.once('data', (packet) => {
        if (packet.readUInt32BE(4) === 80877103) return socket.end('N'); // the SSLRequest code
        if (packet.includes('busy')) return socket.end(postgresFatal('53300', 'sorry, too many clients already'));
        socket.end(postgresFatal('28000', 'no pg_hba.conf entry for host "127.0.0.1", user "postgres", database "x"'));
      }),
    );
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const refusingUrl = `postgres://postgres@127.0.0.1:${(refusing.address() as AddressInfo).port}/x`;
    try {
      expect(await refusedStart({ DATABASE_URL: `${refusingUrl}?ssl=true` })).toEqual({
        code: 1,
        stderr: 'PromptPipe cannot start: DATABASE_URL: The server does not support SSL connections\n',
      });
      expect(await refusedStart({ DATABASE_URL: refusingUrl })).toEqual({
        code: 1,
        stderr:
          'PromptPipe cannot start: DATABASE_URL: ' +
          'no pg_hba.conf entry for host "127.0.0.1", user "postgres", database "x"\n',
      });
      // Refused for the server's own state, not for anything in the URL.
      expect(await refusedStart({ DATABASE_URL: refusingUrl.replace(/x$/, 'busy') })).toEqual({
        code: 1,
        stderr: 'PromptPipe cannot start: PostgreSQL refused the connection: sorry, too many clients already\n',
      });
    } finally {
      refusing.close();
    }
    const bad = await refusedStart({ PORT: 'eighty' });
    expect(bad).toMatchObject({
      code: 78,
      stderr: expect.stringMatching(/^PromptPipe cannot start: invalid configuration\nPORT: /),
    });
  });

  it('on a Go PromptPipe database, says so in one line naming the importer; leaves the file as it was', async () => {
    const goDatabase = join(mkdtempSync(join(tmpdir(), 'promptpipe-go-')), 'state.db');
    copyFileSync(new URL('../fixtures/go-promptpipe/state.db', import.meta.url), goDatabase);
    const digest = () => createHash('sha256').update(readFileSync(goDatabase)).digest('hex');
    const before = digest();
    expect(await refusedStart({ DATABASE_URL: `sqlite:${goDatabase}` })).toEqual({
      code: 1,
      stderr:
        'PromptPipe cannot start: DATABASE_URL is a Go PromptPipe database (its conversation_participants and ' +
        'flow_states, none of our tables): point DATABASE_URL at a new database, then bring the study over with ' +
        'npm run import:go -- --from <this database>\n',
    });
    expect(digest()).toBe(before);
  });

  it('on a SQLite path that cannot be a database, says so in one line naming DATABASE_URL, not a stack', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'promptpipe-sqlite-'));
    const notADatabase = join(folder, 'notes.txt');
    writeFileSync(notADatabase, 'not a database, but long enough for SQLite to read a header from it\n'.repeat(4));
    expect(await refusedStart({ DATABASE_URL: `sqlite:${notADatabase}` })).toEqual({
      code: 1,
      stderr:
        `PromptPipe cannot start: DATABASE_URL: cannot open ${notADatabase} ` +
        'as a SQLite database (file is not a database)\n',
    });
    // A file where a folder of the path should be.
    const underAFile = await refusedStart({ DATABASE_URL: `sqlite:${notADatabase}/promptpipe.sqlite` });
    expect(underAFile).toMatchObject({ code: 1 });
    expect(underAFile.stderr).toMatch(
      /^PromptPipe cannot start: DATABASE_URL: cannot open \S+promptpipe\.sqlite as a SQLite database \(.+\)\n$/,
    );
  });
});

/** A PostgreSQL ErrorResponse message of severity FATAL, as a server sends it when it refuses a connection. */
function postgresFatal(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`);
  const header = Buffer.alloc(5);
  header.write('E');
  header.writeUInt32BE(fields.length + 4, 1);
  return Buffer.concat([header, fields]);
}
