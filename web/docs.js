// Renders /openapi.json: one block per operation, grouped by tag, schemas shown as JSON.
import { el, json } from './render.js';

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

/** "bearer", "client_token (read)", "none": who may call an operation. */
function securityText(op, spec) {
  const requirements = op.security ?? spec.security ?? [];
  if (requirements.length === 0) return 'none (public)';
  return requirements
    .map((requirement) =>
      Object.entries(requirement)
        .map(([name, scopes]) => (scopes.length ? `${name} (${scopes.join(', ')})` : name))
        .join(' + '),
    )
    .join(' or ');
}

function responses(op) {
  const rows = Object.entries(op.responses ?? {}).map(([status, response]) => {
    const media = Object.entries(response.content ?? {});
    return el(
      'li',
      {},
      el('code', {}, status),
      ` ${response.description ?? ''}`,
      ...media.map(([type, { schema }]) =>
        schema?.$ref
          ? el(
              'span.muted',
              {},
              ` — ${type}: `,
              el('a', { href: `#schema-${schema.$ref.split('/').pop()}` }, schema.$ref.split('/').pop()),
            )
          : el('details', {}, el('summary', {}, type), el('pre', {}, json(schema))),
      ),
    );
  });
  return rows.length ? el('div', {}, el('strong', {}, 'Responses'), el('ul', {}, rows)) : null;
}

function operation(path, method, op, spec) {
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
    el('p.muted', {}, 'Security: ', securityText(op, spec)),
    op['x-websocket']
      ? el(
          'p',
          {},
          'WebSocket frames — server → client: ',
          el('a', { href: '#schema-SessionEvent' }, 'SessionEvent'),
          '; client → server: ',
          el('a', { href: '#schema-SocketFrame' }, 'SocketFrame'),
        )
      : null,
    responses(op),
  );
}

/** OpenAPI `webhooks`: what this server sends (the outbound webhook). */
function webhooks(spec) {
  const entries = Object.entries(spec.webhooks ?? {});
  if (!entries.length) return null;
  return el(
    'div',
    {},
    el('h2', {}, 'webhooks we send'),
    ...entries.flatMap(([name, item]) =>
      Object.entries(item).map(([method, op]) =>
        el(
          'section.panel.operation',
          { id: `webhook-${name}` },
          el('h3', {}, el('span.tag', {}, method.toUpperCase()), ' ', el('code', {}, name)),
          el('p', {}, op.summary ?? ''),
          el('p.muted', {}, op.description ?? ''),
          el(
            'details',
            {},
            el('summary', {}, 'Body (application/json)'),
            el('pre', {}, json(op.requestBody?.content?.['application/json']?.schema ?? {})),
          ),
          responses(op),
        ),
      ),
    ),
  );
}

function schemas(spec) {
  const entries = Object.entries(spec.components?.schemas ?? {});
  return el(
    'div',
    {},
    el('h2', {}, 'schemas'),
    ...entries.map(([name, schema]) =>
      el(
        'section.panel',
        { id: `schema-${name}` },
        el('h3', {}, el('code', {}, name)),
        schema.description ? el('p', {}, schema.description) : null,
        el('details', {}, el('summary', {}, 'JSON Schema'), el('pre', {}, json(schema))),
      ),
    ),
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
      groups.get(tag).push(operation(path, method, op, spec));
    }
  }
  const root = document.querySelector('#docs');
  root.replaceChildren(
    el('p', {}, spec.info.description ?? ''),
    el(
      'p.muted',
      {},
      'Every response is an envelope: {"status":"ok","message"?,"result"?} or ' +
        '{"status":"error","code","message","field"?} (schema Error). ' +
        'With API_TOKEN set, send Authorization: Bearer <token>. ' +
        'The WebSocket and the event stream carry SessionEvent; the socket takes SocketFrame.',
    ),
    ...[...groups].map(([tag, ops]) => el('div', {}, el('h2', {}, tag), ...ops)),
    webhooks(spec),
    schemas(spec),
  );
}

render().catch((error) => {
  document.querySelector('#docs').textContent = `Could not load /openapi.json: ${error}`;
});
