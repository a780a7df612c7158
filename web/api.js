// The console's only door to the server: the public JSON API, with the bearer token if one is set.

const TOKEN_KEY = 'promptpipe.apiToken';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? 'http_error';
    this.field = body?.field;
    /** Every row's problems, when the server listed them (a CSV import). */
    this.problems = body?.problems ?? [];
  }
}

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY) ?? '',
  set: (value) => (value ? sessionStorage.setItem(TOKEN_KEY, value) : sessionStorage.removeItem(TOKEN_KEY)),
};

function headers(extra = {}) {
  const value = token.get();
  return value ? { ...extra, authorization: `Bearer ${value}` } : extra;
}

/** Every item of a paged list, following its `next` links. */
export async function apiAll(path) {
  const items = [];
  for (let next = path; next;) {
    const page = await apiEnvelope('GET', next);
    items.push(...page.result);
    next = page.next;
  }
  return items;
}

/** fetch + the envelope: resolves with `result`, rejects with an ApiError naming code and field. */
export async function api(method, path, body) {
  const parsed = await apiEnvelope(method, path, body);
  return parsed?.result ?? parsed;
}

/** A text body of another type (a CSV file); resolves with the whole envelope (message and result). */
export function apiText(method, path, text, contentType) {
  return apiEnvelope(method, path, text, contentType);
}

/** A file the server sends as an attachment: its bytes and the name it gave. */
export async function apiDownload(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) {
    const text = await response.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = { message: text };
    }
    throw new ApiError(response.status, body);
  }
  const disposition = response.headers.get('content-disposition') ?? '';
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'download';
  return { name, blob: await response.blob() };
}

async function apiEnvelope(method, path, body, contentType = 'application/json') {
  const init = { method, headers: headers(body === undefined ? {} : { 'content-type': contentType }) };
  if (body !== undefined) init.body = contentType === 'application/json' ? JSON.stringify(body) : body;
  const response = await fetch(path, init);
  const text = await response.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = { message: text };
  }
  if (!response.ok || parsed?.status === 'error') throw new ApiError(response.status, parsed);
  return parsed;
}

/**
 * Follows /console/changes (server-sent events, read with fetch so the token can be sent),
 * calling `onChange(conversationId)`; reconnects with a growing pause when the stream drops.
 */
export function followChanges(onChange, onStatus) {
  let stopped = false;
  let pause = 500;
  const run = async () => {
    while (!stopped) {
      try {
        const response = await fetch('/console/changes', { headers: headers({ accept: 'text/event-stream' }) });
        if (!response.ok || !response.body) throw new ApiError(response.status, undefined);
        onStatus(true);
        pause = 500;
        await readEvents(response.body, onChange);
      } catch {
        // Fall through to the reconnect pause.
      }
      onStatus(false);
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 10_000);
    }
  };
  void run();
  return () => (stopped = true);
}

async function readEvents(body, onChange) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split('\n').find((line) => line.startsWith('data: '));
      if (data) onChange(JSON.parse(data.slice(6)).conversation_id);
    }
  }
}
