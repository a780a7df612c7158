// @requires chromium
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../kit/browser.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';

/** A site on its own origin: an empty page a browser app would run in. */
async function site(): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http.createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let api: TestServer;
let browser: Browser;
let allowed: Awaited<ReturnType<typeof site>>;
let other: Awaited<ReturnType<typeof site>>;

beforeAll(async () => {
  [allowed, other] = await Promise.all([site(), site()]);
  api = await startTestServer({ CORS_ORIGINS: allowed.origin });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
  await Promise.all([allowed?.close(), other?.close()]);
});

/** From a page of `origin`: start an echo session over HTTP, then open its WebSocket and read the first event. */
async function tryFrom(origin: string): Promise<{ http: string; socket: string }> {
  const page: Page = await browser.newPage();
  try {
    await page.goto(`${origin}/`);
    return await page.evaluate(async (base) => {
      let id: string | undefined;
      let httpOutcome: string;
      try {
        const response = await fetch(`${base}/api/conversations`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ flow: 'echo' }),
        });
        id = ((await response.json()) as { result: { id: string } }).result.id;
        httpOutcome = `status ${response.status}`;
      } catch {
        httpOutcome = 'blocked';
      }
      const socketUrl = `${base.replace('http', 'ws')}/api/conversations/${id ?? 'none'}/socket?lastEventId=0`;
      const socket = await new Promise<string>((resolve) => {
        const ws = new WebSocket(socketUrl);
        ws.onmessage = (event) => {
          resolve(`event ${JSON.parse(String(event.data)).type}`);
          ws.close();
        };
        ws.onerror = () => resolve('refused');
      });
      return { http: httpOutcome, socket };
    }, api.url);
  } finally {
    await page.close();
  }
}

describe('a browser app on another origin (CORS_ORIGINS)', () => {
  it('talks to a session over HTTP and the WebSocket when its origin is allowed', async () => {
    expect(await tryFrom(allowed.origin)).toEqual({ http: 'status 201', socket: expect.stringMatching(/^event /) });
  });

  it('is refused on both when its origin is not', async () => {
    expect(await tryFrom(other.origin)).toEqual({ http: 'blocked', socket: 'refused' });
  });
});
