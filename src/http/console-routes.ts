import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ChangeFeed } from '../engine/change-feed.ts';
import { resource } from './resource.ts';
import { openEventStream } from './session-stream.ts';

const WEB_DIR = fileURLToPath(new URL('../../web/', import.meta.url));
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
/** A dependency's file, from wherever npm installed it. */
const vendor = (path: string) => createRequire(import.meta.url).resolve(path);

/**
 * The console's files: fixed names, read once, served from memory (no CDN, no directory walking).
 * uPlot (the Study view's charts) is served from its npm package, so it is the version the lockfile pins.
 */
const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/docs': { file: 'docs.html', type: 'text/html; charset=utf-8' },
  '/console/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/console/docs.js': { file: 'docs.js', type: 'text/javascript; charset=utf-8' },
  '/console/api.js': { file: 'api.js', type: 'text/javascript; charset=utf-8' },
  '/console/render.js': { file: 'render.js', type: 'text/javascript; charset=utf-8' },
  '/console/study.js': { file: 'study.js', type: JS },
  '/console/study-charts.js': { file: 'study-charts.js', type: JS },
  '/console/study-files.js': { file: 'study-files.js', type: JS },
  '/console/styles.css': { file: 'styles.css', type: 'text/css; charset=utf-8' },
  '/console/uplot.js': { file: vendor('uplot/dist/uPlot.esm.js'), type: JS },
  '/console/uplot.css': { file: vendor('uplot/dist/uPlot.min.css'), type: CSS },
};
export const CONSOLE_PUBLIC_PATHS = Object.keys(FILES);

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; " +
    "frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};
const HEARTBEAT_MS = 15_000;

export function consoleRoutes(app: FastifyInstance, changes: ChangeFeed): void {
  for (const [path, { file, type }] of Object.entries(FILES)) {
    const body = readFileSync(isAbsolute(file) ? file : `${WEB_DIR}${file}`);
    resource(app, path, {
      GET: {
        schema: { tags: ['console'], summary: `The console's ${path === '/' ? 'page' : path}` },
        handler: async (_request, reply) =>
          reply.headers({ ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-cache' }).send(body),
      },
    });
  }
  resource(app, '/console/changes', {
    GET: {
      schema: {
        tags: ['console'],
        summary: 'Server-sent events: the id of each conversation as something in it changes',
      },
      handler: async (request, reply) => streamChanges(reply, changes, () => request.raw.destroyed),
    },
  });
}

/**
 * One SSE event per changed conversation. Ids pending while the client is slow are coalesced
 * in a set, so a slow reader costs at most one entry per conversation, never a growing queue.
 */
function streamChanges(reply: FastifyReply, changes: ChangeFeed, gone: () => boolean): void {
  const raw = openEventStream(reply);
  raw.write(': connected\n\n');
  const pending = new Set<string>();
  let blocked = false;
  const flush = () => {
    blocked = false;
    for (const id of pending) {
      pending.delete(id);
      if (!raw.write(`event: change\ndata: ${JSON.stringify({ conversation_id: id })}\n\n`)) {
        blocked = true;
        return;
      }
    }
  };
  const unsubscribe = changes.subscribe((id) => {
    pending.add(id);
    if (!blocked) flush();
  });
  const heartbeat = setInterval(() => {
    if (!blocked) raw.write(': keep-alive\n\n');
  }, HEARTBEAT_MS);
  raw.on('drain', flush);
  const stop = () => {
    unsubscribe();
    clearInterval(heartbeat);
  };
  raw.on('close', stop);
  if (gone()) stop();
}
