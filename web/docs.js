// Renders /openapi.json: one block per operation, grouped by tag, schemas shown as JSON.
import { el, json } from './render.js';

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

function operation(path, method, op) {
  const params = (op.parameters ?? []).map((p) =>
    el(
      'li',
      {},
      el('code', {}, p.name),
      ` (${p.in}${p.required ? ', required' : ''})`,
      p.schema ? ` ${p.schema.type ?? ''}` : '',
    ),
  );
  const body = op.requestBody?.content?.['application/json']?.schema;
  return el(
    'section.panel.operation',
    { id: `${method}-${path}` },
    el('h3', {}, el('span.tag', {}, method.toUpperCase()), ' ', el('code', {}, path)),
    op.summary ? el('p', {}, op.summary) : null,
    params.length ? el('div', {}, el('strong', {}, 'Parameters'), el('ul', {}, params)) : null,
    body ? el('details', {}, el('summary', {}, 'Request body (application/json)'), el('pre', {}, json(body))) : null,
  );
}

async function render() {
  const spec = await fetch('/openapi.json').then((response) => response.json());
  document.querySelector('#version').textContent = `${spec.info.title} ${spec.info.version}`;
  const groups = new Map();
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'other';
      if (!groups.has(tag)) groups.set(tag, []);
      groups.get(tag).push(operation(path, method, op));
    }
  }
  const root = document.querySelector('#docs');
  root.replaceChildren(
    el('p', {}, spec.info.description ?? ''),
    el(
      'p.muted',
      {},
      'Every response is an envelope: {"status":"ok","message"?,"result"?} or ' +
        '{"status":"error","code","message","field"?}. With API_TOKEN set, send Authorization: Bearer <token>.',
    ),
    ...[...groups].map(([tag, ops]) => el('div', {}, el('h2', {}, tag), ...ops)),
  );
}

render().catch((error) => {
  document.querySelector('#docs').textContent = `Could not load /openapi.json: ${error}`;
});
