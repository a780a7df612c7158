// DOM helpers. Text always goes in as text (textContent), never as HTML: model output included.

/** el('div#id.card', { onclick }, child, 'text', ...) */
export function el(spec, props = {}, ...children) {
  const [head, ...classes] = spec.split('.');
  const [tag, id] = head.split('#');
  const node = document.createElement(tag || 'div');
  if (id) node.id = id;
  if (classes.length) node.className = classes.join(' ');
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key in node && key !== 'list' && key !== 'form') node[key] = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  node.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return node;
}

/** The browser's own time zone: where times are shown unless a participant's zone is given. */
export const BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

const formats = new Map();
function formatIn(timeZone) {
  if (!formats.has(timeZone)) {
    const options = { hourCycle: 'h23', timeZoneName: 'short', timeZone };
    for (const part of ['year', 'month', 'day', 'hour', 'minute', 'second']) options[part] = '2-digit';
    options.year = 'numeric';
    formats.set(timeZone, new Intl.DateTimeFormat('en-US', options));
  }
  return formats.get(timeZone);
}

/** "2026-06-01 08:00:00 EDT": a time in `timeZone` (default the browser's), with its zone named. */
export function fmtTime(iso, timeZone = BROWSER_ZONE) {
  if (!iso) return '—';
  let format;
  try {
    format = formatIn(timeZone || BROWSER_ZONE);
  } catch {
    format = formatIn(BROWSER_ZONE); // a zone this browser does not know
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(iso)).map((part) => [part.type, part.value]));
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  return `${date} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName}`;
}

/** The same instant in UTC, for a tooltip. */
export const fmtUtc = (iso) => (iso ? `${new Date(iso).toISOString().replace('T', ' ').slice(0, 19)} UTC` : '');

/** A <time> showing `iso` in `timeZone`, UTC on hover. */
export function timeEl(iso, timeZone) {
  if (!iso) return el('span.muted', {}, '—');
  return el('time', { dateTime: iso, title: fmtUtc(iso) }, fmtTime(iso, timeZone));
}

/** "in 4h 10m" / "2m ago" relative to the server clock. */
export function fmtRelative(iso, nowMs) {
  const delta = new Date(iso).getTime() - nowMs;
  const minutes = Math.round(Math.abs(delta) / 60_000);
  const text =
    minutes < 60
      ? `${minutes}m`
      : minutes < 2880
        ? `${Math.floor(minutes / 60)}h ${minutes % 60}m`
        : `${Math.round(minutes / 1440)}d`;
  return delta >= 0 ? `in ${text}` : `${text} ago`;
}

export const json = (value) => JSON.stringify(value, null, 1);

export function section(title, ...children) {
  return el('section.panel', { 'aria-label': title }, el('h3', {}, title), ...children);
}

export function table(head, rows, empty = 'None.') {
  if (rows.length === 0) return el('p.muted', {}, empty);
  return el(
    'table',
    {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        head.map((cell) => el('th', { scope: 'col' }, cell)),
      ),
    ),
    el(
      'tbody',
      {},
      rows.map((row) =>
        el(
          'tr',
          {},
          row.map((cell) => el('td', {}, cell)),
        ),
      ),
    ),
  );
}
