import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoModule } from '../../src/flows/echo/echo-module.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { openWebSession } from '../kit/web-session.ts';

const PHONE = '+14165550190';

describe('a flow module (the echo example)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('runs as a web session once it is in the registry, with a turn record per message', async () => {
    const session = await openWebSession(server, 'echo');
    expect((await session.say('hello there')).text).toBe('echo: hello there');
    const turns = await server.store.listTurns(session.id);
    expect(turns.map((turn) => turn.trigger)).toEqual(['greeting', 'message']);
  });

  it('answers a participant enrolled with it over the HTTP channel', async () => {
    const enrolled = await server.request('POST', '/conversation/participants', { phone_number: PHONE, flow: 'echo' });
    expect(enrolled.status).toBe(201);
    expect((await server.request('POST', '/conversation/inbound', { from: PHONE, text: 'ping' })).status).toBe(202);
    await server.sink.waitFor(2);
    expect(server.sink.to(PHONE).map((message) => message.text)).toEqual([
      'Echo here: send me anything and I will send it back.',
      'echo: ping',
    ]);
  });
});

describe('a server given only the echo module', () => {
  it('makes it the default flow and offers no other', async () => {
    const server = await startTestServer({}, { flowModules: [echoModule] });
    try {
      expect((await server.request('POST', '/conversation/participants', { phone_number: PHONE })).status).toBe(201);
      await server.sink.waitFor(1);
      expect(server.sink.to(PHONE)[0]?.text).toMatch(/^Echo here/);
      const refused = await server.request('POST', '/api/conversations', { flow: 'assistant' });
      expect(refused).toMatchObject({
        status: 400,
        body: { field: 'flow', message: expect.stringContaining('must be one of echo') },
      });
    } finally {
      await server.close();
    }
  });
});

/** Every `import … from '…'` path of the TypeScript files under `dir`, with the file it is in. */
function importsUnder(dir: string): Array<{ file: string; path: string }> {
  const found: Array<{ file: string; path: string }> = [];
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.ts')) continue;
    const file = join(dir, entry);
    for (const match of readFileSync(file, 'utf8').matchAll(/^import [^;]*? from '([^']+)'/gms))
      found.push({ file, path: match[1]! });
  }
  return found;
}

describe('module boundaries', () => {
  it('are read from imports the scan really finds (else the checks below would pass on nothing)', () => {
    expect(importsUnder('src/engine').some(({ path }) => path.includes('/store/'))).toBe(true);
    expect(importsUnder('src/flows/echo').map(({ path }) => path)).toContain('../../engine/flow.ts');
  });

  it('the engine, core, channels and store import nothing from the flows', () => {
    const upward = ['src/engine', 'src/core', 'src/channels', 'src/store']
      .flatMap(importsUnder)
      .filter(({ path }) => path.includes('/flows/'));
    expect(upward).toEqual([]);
  });

  it('channels import nothing from the store: they are transport plus declared capabilities', () => {
    expect(importsUnder('src/channels').filter(({ path }) => path.includes('/store/'))).toEqual([]);
  });

  it('the echo module imports nothing outside its folder but the engine contract and the module contract', () => {
    const allowed = ['../../engine/flow.ts', '../../engine/tool-loop.ts', '../flow-module.ts'];
    expect(
      importsUnder('src/flows/echo').filter(({ path }) => !path.startsWith('./') && !allowed.includes(path)),
    ).toEqual([]);
  });
});
