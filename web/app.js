// The operator console: participants, their live conversation, profile, timers and turns.
import { api, apiAll, ApiError, followChanges, token } from './api.js';
import { el, fmtRelative, fmtTime, fmtUtc, json, section, table } from './render.js';
import { refreshStudy, showStudy } from './study.js';

const $ = (selector) => document.querySelector(selector);
const state = { participants: [], selectedId: null, sessionId: null, sessions: [], clock: null, refreshing: new Set() };

function announce(text, kind = 'info') {
  const status = $('#status');
  status.textContent = text;
  status.className = `status ${kind}`;
}

function reportError(error) {
  if (error instanceof ApiError && error.status === 401) {
    $('#token-form').hidden = false;
    announce('This server needs its API token.', 'error');
    return;
  }
  announce(error instanceof ApiError ? `${error.code}: ${error.message}` : String(error), 'error');
}

// ---- header: model and clock -------------------------------------------------------------

/** How often the console asks /health whether the store or the model is failing. */
const HEALTH_POLL_MS = 10_000;

/** A banner while a dependency fails: what an operator must know before reading any transcript. */
function showHealth(health) {
  const banner = $('#health-banner');
  const model = health.model_status;
  let text = '';
  if (health.status === 'down')
    text =
      `The database is not serving: ${health.store_problem ?? 'unknown problem'}. ` +
      'Messages are refused with 503 until it is back.';
  else if (model?.state === 'failing' && model.lastErrorTransient)
    text =
      `The model cannot be reached (${model.consecutiveFailures} failed calls; last: ${model.lastError}). ` +
      'Messages wait and are answered once it is back.';
  else if (model?.state === 'failing')
    text =
      `The model refuses requests (last: ${model.lastError}). ` +
      'Check LLM_BASE_URL, LLM_API_KEY and LLM_MODEL; affected messages got an apology.';
  // A channel, the timer worker or a queue: /health names each problem in a line.
  const others = (health.problems ?? []).filter(
    (problem) => !problem.startsWith('model:') && !problem.startsWith('store:'),
  );
  if (health.status === 'degraded' && others.length)
    text = [text, `Degraded: ${others.join('; ')}. Messages are kept and go out once it passes.`]
      .filter(Boolean)
      .join(' ');
  banner.textContent = text;
  banner.hidden = !text;
}

async function pollHealth() {
  const health = await fetch('/health')
    .then((response) => response.json())
    .catch(() => ({ status: 'down', store_problem: 'the server does not answer' }));
  showHealth(health);
  setTimeout(pollHealth, HEALTH_POLL_MS);
}

async function loadHeader() {
  const health = await fetch('/health').then((response) => response.json());
  showHealth(health);
  setTimeout(pollHealth, HEALTH_POLL_MS);
  const badge = $('#model-badge');
  if (health.model?.provider === 'offline-demo') {
    badge.textContent = 'offline demo model — configure LLM_BASE_URL for a real model';
    badge.className = 'badge warn';
  } else {
    badge.textContent = `model: ${health.model?.provider} / ${health.model?.model}`;
    badge.className = 'badge';
  }
  await loadClock();
}

async function loadClock() {
  state.clock = await api('GET', '/admin/clock');
  const box = $('#clock');
  box.replaceChildren(
    el(
      'span',
      { id: 'clock-now', title: `server clock; ${fmtUtc(state.clock.now)}` },
      `${state.clock.mode === 'virtual' ? 'virtual clock' : 'clock'}: ${fmtTime(state.clock.now)}`,
    ),
  );
  if (state.clock.mode !== 'virtual') return;
  for (const [label, advance] of [
    ['+5 min', '5m'],
    ['+1 h', '1h'],
    ['+1 day', '1d'],
  ]) {
    box.append(
      el(
        'button.small',
        { type: 'button', onclick: () => fastForward(advance), 'aria-label': `fast-forward ${label}` },
        label,
      ),
    );
  }
}

async function fastForward(advance) {
  try {
    announce(`Moving the clock ${advance}…`);
    const result = await api('POST', '/admin/clock', { advance });
    announce(`Clock moved to ${fmtTime(result.now)}; ${result.fired} timer(s) fired.`);
    await Promise.all([loadClock(), refreshList(), refreshDetail(), refreshStudy()]);
  } catch (error) {
    reportError(error);
  }
}

// ---- participants list and enrolment -------------------------------------------------------

async function refreshList() {
  state.participants = await apiAll('/conversation/participants?limit=1000');
  const list = $('#participant-list');
  list.replaceChildren(
    ...state.participants.map((p) =>
      el(
        'li',
        {},
        el(
          'a',
          {
            href: `#/p/${encodeURIComponent(p.id)}`,
            'aria-current': p.id === state.selectedId ? 'page' : undefined,
            dataset: { id: p.id },
          },
          el('strong', {}, p.name || p.phone_number),
          el('span.muted', {}, ` ${p.phone_number}`),
          el(
            'span.tags',
            {},
            el(`span.tag.status-${p.status}`, {}, p.status),
            p.sub_state ? el('span.tag', {}, p.sub_state) : null,
          ),
        ),
      ),
    ),
  );
  if (state.participants.length === 0) list.append(el('li.muted', {}, 'No participants yet: enrol one below.'));
}

async function enrol(event) {
  event.preventDefault();
  const form = event.currentTarget;
  for (const node of form.querySelectorAll('.field-error')) node.textContent = '';
  const body = {};
  for (const [key, value] of new FormData(form)) if (String(value).trim()) body[key] = String(value).trim();
  try {
    const participant = await api('POST', '/conversation/participants', body);
    form.reset();
    form.elements.timezone.value = Intl.DateTimeFormat().resolvedOptions().timeZone;
    announce(`Enrolled ${participant.name || participant.phone_number}.`);
    await refreshList();
    location.hash = `#/p/${encodeURIComponent(participant.id)}`;
  } catch (error) {
    const slot =
      error instanceof ApiError && error.field ? form.querySelector(`[data-error-for="${error.field}"]`) : null;
    if (slot) slot.textContent = error.message;
    reportError(error);
  }
}

// ---- one participant -----------------------------------------------------------------------

function selectFromHash() {
  const session = /^#\/s\/(.+)$/.exec(location.hash);
  state.sessionId = session ? decodeURIComponent(session[1]) : null;
  if (state.sessionId) {
    state.selectedId = null;
    renderSessionList();
    buildSession();
    return;
  }
  const match = /^#\/p\/(.+)$/.exec(location.hash);
  state.selectedId = match ? decodeURIComponent(match[1]) : null;
  for (const link of document.querySelectorAll('#participant-list a')) {
    if (link.dataset.id === state.selectedId) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  buildDetail();
  void refreshDetail();
}

/** The page skeleton, built once per selection so the chat box keeps its text across refreshes. */
function buildDetail() {
  const detail = $('#detail');
  $('#study-link').setAttribute('aria-current', state.selectedId ? 'false' : 'page');
  if (!state.selectedId) {
    // No participant chosen: the study at a glance, the first thing a coordinator sees.
    followConversation(null);
    void showStudy(detail, { onImported: refreshList, reportError });
    return;
  }
  const chat = el(
    'form#chat-form.chat',
    { onsubmit: sendAsParticipant },
    el('label', { for: 'chat-text' }, 'Write as the participant'),
    el('input#chat-text', {
      name: 'text',
      autocomplete: 'off',
      required: true,
      maxLength: 4096,
      placeholder: 'e.g. I want to walk more',
    }),
    el('button', { type: 'submit' }, 'Send'),
  );
  detail.replaceChildren(
    el('div#participant-header'),
    el('div.columns', {}, conversationPanel(chat), el('div#side.side')),
  );
  followConversation(state.selectedId);
}

/** A status event as an operator reads it: the tool and its outcome when there is one, else the text. */
function operatorStatus(event) {
  const tool = event.data?.tool;
  if (!tool) return event.text;
  if (event.data.phase === 'started') return `${tool}: ${event.text}`;
  return `${tool} ${event.data.status === 'ok' ? 'done' : 'failed'}`;
}

/** The live transcript, the streaming reply, the engine's activity and the chat box. */
function conversationPanel(chat) {
  return el(
    'div.conversation',
    {},
    el('h3', {}, 'Conversation ', el('span#stream-state.muted', {}, '')),
    el('ol#messages.messages', { 'aria-live': 'polite' }),
    el('p#streaming.message.assistant.streaming', { hidden: true, 'aria-live': 'polite' }),
    el('ul#activity.activity', { 'aria-label': 'What the engine is doing' }),
    el('ul#approvals.approvals', { 'aria-label': 'Waiting for approval', hidden: true }),
    chat,
  );
}

// ---- the selected conversation's session stream (WebSocket, resumable by seq) ------------

const stream = { socket: null, id: null, lastSeq: null, retry: null };

async function followConversation(id) {
  if (stream.socket) {
    stream.socket.onclose = null;
    stream.socket.close();
  }
  clearTimeout(stream.retry);
  Object.assign(stream, { socket: null, id, lastSeq: stream.id === id ? stream.lastSeq : null });
  if (!id) return;
  try {
    const query = new URLSearchParams();
    if (stream.lastSeq !== null) query.set('lastEventId', String(stream.lastSeq));
    if (token.get()) query.set('ticket', (await api('POST', '/api/tickets', { conversation_id: id })).ticket);
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(
      `${scheme}://${location.host}/api/conversations/${encodeURIComponent(id)}/socket?${query}`,
    );
    stream.socket = socket;
    socket.onopen = () => ($('#stream-state').textContent = '· streaming');
    socket.onmessage = (message) => onStreamEvent(JSON.parse(message.data));
    socket.onclose = () => {
      if ($('#stream-state')) $('#stream-state').textContent = '· reconnecting';
      stream.retry = setTimeout(
        () => (state.selectedId === id || state.sessionId === id) && followConversation(id),
        1000,
      );
    };
  } catch (error) {
    reportError(error);
  }
}

// ---- web sessions (no participant: the conversation is the whole context) -------------------

const SESSION_FLOWS = {
  'service-desk': {
    title: 'Service-desk session',
    hint: 'Demo callers: +1 415 555 0100 with ZIP 94107 (Alex) or 94110 (Jordan); +1 212 555 0123 with 10001 (Sam).',
    placeholder: 'e.g. When is my next appointment?',
  },
  assistant: {
    title: 'Assistant session',
    hint: 'Try: what is 1,250 * 12 · note: buy oat milk · list my notes · what did I say about milk?',
    placeholder: 'e.g. What is 15% of 240?',
  },
};

/** The web sessions the server keeps (newest first), so they are listed again after a reload. */
async function loadSessions() {
  const sessions = await api('GET', '/api/conversations?limit=50');
  state.sessions = sessions.map(({ id, flow, created_at }) => ({ id, flow, createdAt: created_at }));
  renderSessionList();
}

async function startSession() {
  try {
    const flow = $('#session-flow').value;
    const session = await api('POST', '/api/conversations', { flow });
    state.sessions.unshift({ id: session.id, flow, createdAt: new Date().toISOString() });
    location.hash = `#/s/${encodeURIComponent(session.id)}`;
  } catch (error) {
    reportError(error);
  }
}

function renderSessionList() {
  $('#session-list').replaceChildren(
    // Named by flow and the end of the id: the order of two sessions started at the same (virtual) instant is not
    // fixed, so a running number could change across a reload.
    ...state.sessions.map(({ id, flow, createdAt }) =>
      el(
        'li',
        {},
        el(
          'a',
          {
            href: `#/s/${encodeURIComponent(id)}`,
            'aria-current': id === state.sessionId ? 'page' : undefined,
            title: createdAt ? `started ${fmtTime(createdAt)}` : undefined,
            dataset: { id },
          },
          `${SESSION_FLOWS[flow]?.title ?? 'Session'} …${id.slice(-6)}`,
        ),
      ),
    ),
  );
}

function buildSession() {
  const known = state.sessions.find((session) => session.id === state.sessionId);
  const flow = SESSION_FLOWS[known?.flow] ?? { title: 'Web session', hint: '', placeholder: '' };
  const chat = el(
    'form#chat-form.chat',
    { onsubmit: sendAsCaller },
    el('label', { for: 'chat-text' }, 'Write as the user'),
    el('input#chat-text', {
      name: 'text',
      autocomplete: 'off',
      required: true,
      maxLength: 32000,
      placeholder: flow.placeholder,
    }),
    el('button', { type: 'submit' }, 'Send'),
  );
  $('#detail').replaceChildren(
    el(
      'div#participant-header',
      {},
      el('h2#session-title', {}, flow.title),
      el('p.muted#session-hint', {}, flow.hint),
      el('p', {}, 'State: ', el('strong#session-state', {}, '…')),
    ),
    conversationPanel(chat),
  );
  followConversation(state.sessionId);
}

async function refreshSession() {
  const id = state.sessionId;
  if (!id || state.refreshing.has(id)) return;
  state.refreshing.add(id);
  try {
    const { resync } = await api('POST', `/api/conversations/${encodeURIComponent(id)}/resync`, { lastEventId: 0 });
    if (state.sessionId !== id) return;
    $('#session-state').textContent = resync.data.state;
    renderApprovals(id, resync.data.view?.approvals ?? []);
    const flow = SESSION_FLOWS[resync.data.flow];
    if (flow && $('#session-title').textContent !== flow.title) {
      $('#session-title').textContent = flow.title;
      $('#session-hint').textContent = flow.hint;
    }
    $('#messages').replaceChildren(
      ...resync.data.messages.map((message) =>
        el(
          `li.message.${message.role}`,
          {},
          el('div.meta', {}, `${message.role} · ${fmtTime(message.at)}`),
          el('div.text', {}, message.text),
        ),
      ),
    );
  } catch (error) {
    reportError(error);
  } finally {
    state.refreshing.delete(id);
  }
}

/** Tool calls that wait for a yes (the assistant's `delete_note`, MCP writes): the operator answers here. */
function renderApprovals(conversationId, waiting) {
  const list = $('#approvals');
  if (!list) return;
  const answer = (callId, approve) => async () => {
    try {
      await api(
        'POST',
        `/api/conversations/${encodeURIComponent(conversationId)}/approvals/${encodeURIComponent(callId)}`,
        {
          approve,
        },
      );
      announce(approve ? 'Approved; the reply goes on.' : 'Denied; the reply goes on without it.');
    } catch (error) {
      reportError(error);
    }
    void refreshSession();
  };
  list.hidden = waiting.length === 0;
  list.replaceChildren(
    ...waiting.map(({ callId, summary }) =>
      el(
        'li.approval',
        {},
        el('span', {}, `Waiting for approval: ${summary}`),
        el('button.small', { type: 'button', onclick: answer(callId, true) }, 'Approve'),
        el('button.small.secondary', { type: 'button', onclick: answer(callId, false) }, 'Deny'),
      ),
    ),
  );
}

async function sendAsCaller(event) {
  event.preventDefault();
  const input = $('#chat-text');
  const text = input.value.trim();
  if (!text) return;
  try {
    await api('POST', `/api/conversations/${encodeURIComponent(state.sessionId)}/message`, { text });
    input.value = '';
  } catch (error) {
    reportError(error);
  }
}

function onStreamEvent(event) {
  if (event.type !== 'resync' && event.type !== 'error') stream.lastSeq = event.seq;
  const bubble = $('#streaming');
  if (!bubble) return;
  if (event.type === 'token') {
    if (bubble.hidden || bubble.dataset.messageId !== event.messageId) {
      bubble.textContent = '';
      bubble.dataset.messageId = event.messageId;
      bubble.hidden = false;
    }
    bubble.textContent += event.text;
  } else if (event.type === 'approval_requested') {
    void (state.sessionId ? refreshSession() : refreshDetail());
  } else if (event.type === 'status') {
    const activity = $('#activity');
    // Operators see which tool ran; the person sees only the phrase (the event's text).
    activity.prepend(el('li', {}, `${fmtTime(event.at)} · ${operatorStatus(event)}`));
    while (activity.children.length > 6) activity.lastChild.remove();
  } else if (event.type === 'final' || event.type === 'resync' || (event.type === 'speaking' && !event.data.speaking)) {
    if (event.type !== 'final' || event.messageId === bubble.dataset.messageId) bubble.hidden = true;
    void (state.sessionId ? refreshSession() : refreshDetail());
  }
}

async function refreshDetail() {
  const id = state.selectedId;
  if (!id || state.refreshing.has(id)) return;
  state.refreshing.add(id);
  try {
    const base = `/conversation/participants/${encodeURIComponent(id)}`;
    const [participant, conversation, history, turns] = await Promise.all([
      api('GET', base),
      api('GET', `${base}/state`),
      api('GET', `${base}/history?all=true`),
      api('GET', `${base}/turns?limit=20`),
    ]);
    if (state.selectedId !== id) return;
    renderHeader(participant, conversation);
    renderMessages(history.messages, participant);
    renderSide(conversation, turns);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      location.hash = '';
      announce('That participant no longer exists.');
    } else reportError(error);
  } finally {
    state.refreshing.delete(id);
  }
}

function renderHeader(participant, conversation) {
  const paused = participant.status !== 'active';
  const force = el(
    'form.inline',
    { onsubmit: (event) => forceSubState(event, participant.id) },
    el('label', { for: 'force-sub-state' }, 'Sub-state'),
    el(
      'select#force-sub-state',
      { name: 'sub_state' },
      conversation.sub_states.map((name) =>
        el('option', { value: name, selected: name === conversation.sub_state }, name),
      ),
    ),
    el('button.small', { type: 'submit' }, 'Force'),
  );
  $('#participant-header').replaceChildren(
    el('h2', {}, participant.name || participant.phone_number),
    el(
      'p.meta',
      {},
      `${participant.phone_number} · ${participant.timezone ?? 'no time zone'} · `,
      el(`span.tag.status-${participant.status}`, {}, participant.status),
      ' ',
      el('span.tag', { id: 'sub-state' }, conversation.sub_state),
    ),
    el(
      'div.actions',
      {},
      el(
        'button',
        { type: 'button', onclick: () => update(participant.id, { status: paused ? 'active' : 'paused' }) },
        paused ? 'Resume' : 'Pause',
      ),
      el(
        'label.checkbox',
        {},
        el('input', {
          type: 'checkbox',
          checked: participant.debug,
          onchange: (event) => update(participant.id, { debug: event.target.checked }),
        }),
        ' debug messages',
      ),
      force,
      el('button.danger', { type: 'button', onclick: () => remove(participant) }, 'Delete'),
    ),
  );
}

function renderMessages(messages, participant) {
  const list = $('#messages');
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.replaceChildren(
    ...messages.map((message) =>
      el(
        `li.message.${message.role}`,
        { dataset: { kind: message.kind, source: message.source }, title: fmtUtc(message.created_at) },
        el(
          'div.meta',
          {},
          `${message.role}${message.source && message.source !== 'turn' ? ` · ${message.source}` : ''} · ` +
            `${fmtTime(message.created_at, participant.timezone)}`,
        ),
        el('div.text', {}, message.poll ? message.poll.question : message.text),
        message.poll
          ? el(
              'div.poll',
              {},
              message.poll.options.map((option) =>
                el('button.small', { type: 'button', onclick: () => say(participant, option) }, option),
              ),
            )
          : null,
      ),
    ),
  );
  if (atBottom) list.scrollTop = list.scrollHeight;
}

function renderSide(conversation, turns) {
  const profile = conversation.profile;
  const now = new Date(state.clock?.now ?? Date.now()).getTime();
  const fields = profile
    ? Object.entries(profile).filter(([, value]) => typeof value === 'string' || typeof value === 'number')
    : [];
  const tone = profile?.tone;
  $('#side').replaceChildren(
    section(
      'Profile',
      fields.length
        ? el(
            'dl#profile.profile',
            {},
            fields.flatMap(([key, value]) => [el('dt', {}, key), el('dd', { dataset: { field: key } }, String(value))]),
          )
        : el('p.muted', {}, 'Nothing saved yet.'),
    ),
    section(
      'Tone',
      tone && Object.keys(tone.scores).length
        ? table(
            ['tag', 'score', 'active'],
            Object.entries(tone.scores).map(([tag, score]) => [
              tag,
              score.toFixed(4),
              tone.active.includes(tag) ? 'yes' : '',
            ]),
          )
        : el('p.muted', {}, 'No tone observed yet.'),
    ),
    section(
      'Schedules',
      table(
        ['id', 'when', 'zone'],
        conversation.schedules.map((s) => [
          s.id,
          s.type === 'fixed' ? `daily ${s.fixed_time}` : `daily ${s.random_start_time}–${s.random_end_time}`,
          s.timezone,
        ]),
        'No schedules.',
      ),
    ),
    section(
      'Pending timers',
      table(
        ['kind', 'due', ''],
        conversation.pending_timers.map((t) => [t.kind, fmtTime(t.due_at), fmtRelative(t.due_at, now)]),
        'No pending timers.',
      ),
    ),
    section('Turns', turns.length ? el('ol.turns', {}, turns.map(renderTurn)) : el('p.muted', {}, 'No turns yet.')),
  );
}

/** A turn: failed or cancelled ones and those that ran more than once are marked at a glance. */
function renderTurn(turn) {
  const retried = turn.attempts > 1;
  return el(
    `li.turn.${turn.status}${retried ? '.retried' : ''}`,
    {},
    el(
      'details',
      {},
      el(
        'summary',
        {},
        turn.status === 'completed' ? null : el(`span.badge.${turn.status}`, {}, turn.status),
        retried
          ? el(
              'span.badge.warn',
              { title: 'Earlier runs failed (an outage or an error) and it was retried' },
              `${turn.attempts} tries`,
            )
          : null,
        ` ${fmtTime(turn.started_at)} · ${turn.trigger} · ${turn.module ?? '—'} · ${turn.total_ms} ms · ` +
          `${turn.tool_calls.length} tool call(s)`,
      ),
      turn.error ? el('p.error', {}, turn.error) : null,
      turn.tool_calls.map((call) =>
        el(
          'div.tool-call',
          {},
          el(
            'div',
            {},
            el('strong', {}, call.name),
            ` · round ${call.round} · ${call.status} · ${call.duration_ms} ms`,
          ),
          el('pre', {}, json(call.arguments)),
          el('pre.result', {}, typeof call.result === 'string' ? call.result : json(call.result)),
        ),
      ),
    ),
  );
}

async function say(participant, text) {
  try {
    await api('POST', '/conversation/inbound', { from: participant.phone_number, text });
  } catch (error) {
    reportError(error);
  }
}

async function sendAsParticipant(event) {
  event.preventDefault();
  const input = $('#chat-text');
  const participant = state.participants.find((p) => p.id === state.selectedId);
  if (!participant || !input.value.trim()) return;
  const text = input.value;
  input.value = '';
  await say(participant, text);
}

async function update(id, patch) {
  try {
    await api('PUT', `/conversation/participants/${encodeURIComponent(id)}`, patch);
    await Promise.all([refreshList(), refreshDetail()]);
  } catch (error) {
    reportError(error);
  }
}

async function forceSubState(event, id) {
  event.preventDefault();
  try {
    const subState = new FormData(event.currentTarget).get('sub_state');
    await api('POST', `/conversation/participants/${encodeURIComponent(id)}/state`, {
      sub_state: subState,
      reason: 'operator console',
    });
    announce(`Sub-state forced to ${subState}.`);
  } catch (error) {
    reportError(error);
  }
}

async function remove(participant) {
  if (
    !confirm(`Delete ${participant.name || participant.phone_number}? A goodbye is sent and all their data is removed.`)
  )
    return;
  try {
    await api('DELETE', `/conversation/participants/${encodeURIComponent(participant.id)}`);
    location.hash = '';
    announce('Participant deleted.');
    await refreshList();
  } catch (error) {
    reportError(error);
  }
}

// ---- live updates --------------------------------------------------------------------------

let listTimer;
function onChange(conversationId) {
  clearTimeout(listTimer);
  listTimer = setTimeout(() => void refreshList().catch(reportError), 150);
  const selected = state.participants.find((p) => p.id === state.selectedId);
  if (selected && selected.conversation_id === conversationId) void refreshDetail();
}

async function start() {
  $('#enrol-form').addEventListener('submit', enrol);
  $('#start-session').addEventListener('click', startSession);
  $('#enrol-form').elements.timezone.value = Intl.DateTimeFormat().resolvedOptions().timeZone;
  $('#token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    token.set(new FormData(event.currentTarget).get('token'));
    $('#token-form').hidden = true;
    void boot();
  });
  window.addEventListener('hashchange', selectFromHash);
  await boot();
}

let stopFollowing;
async function boot() {
  try {
    await loadHeader();
    await refreshList();
    await loadSessions();
    selectFromHash();
    stopFollowing?.();
    stopFollowing = followChanges(onChange, (live) => ($('#live').textContent = live ? '● live' : '○ reconnecting'));
  } catch (error) {
    reportError(error);
  }
}

void start();
