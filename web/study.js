// The Study view: the overview a coordinator reads first. Filters, charts, the participant table
// with its flags, a participant's adherence calendar, the CSV import and the export download.
import { api } from './api.js';
import { el, section, timeEl } from './render.js';
import { adherenceCalendar, dayCharts } from './study-charts.js';
import { exportPanel, importPanel } from './study-files.js';

const STATUSES = ['active', 'paused', 'completed', 'withdrawn'];
const FLAG_LABELS = {
  no_reply_48h: 'no reply 48 h',
  delivery_failing: 'delivery failing',
  opted_out: 'opted out',
  paused: 'paused',
  intake_incomplete_24h: 'intake incomplete',
};

/** The table's columns: header, how a row sorts, how a cell shows. */
const COLUMNS = [
  { key: 'name', label: 'Participant', value: (p) => p.name || p.phone_number, cell: participantCell },
  { key: 'cohort', label: 'Cohort', value: (p) => p.cohort ?? '' },
  {
    key: 'status',
    label: 'Status',
    value: (p) => p.status,
    cell: (p) => el(`span.tag.status-${p.status}`, {}, p.status),
  },
  { key: 'days_enrolled', label: 'Days', value: (p) => p.days_enrolled },
  { key: 'prompts_sent', label: 'Prompts', value: (p) => p.prompts_sent },
  { key: 'done_count', label: 'Done', value: (p) => p.done_count },
  { key: 'done_rate', label: 'Done rate', value: (p) => p.done_rate, cell: (p) => percent(p.done_rate) },
  {
    key: 'response_rate_recent',
    label: 'Response 7 d',
    value: (p) => p.response_rate_recent,
    cell: (p) => percent(p.response_rate_recent),
  },
  { key: 'current_streak', label: 'Streak', value: (p) => p.current_streak },
  {
    key: 'last_reply_at',
    label: 'Last reply',
    value: (p) => p.last_reply_at,
    cell: (p) => timeEl(p.last_reply_at, p.timezone),
  },
  { key: 'flags', label: 'Flags', value: (p) => p.flags.length, cell: flagsCell },
];

const view = {
  overview: null,
  cohorts: new Set(),
  filter: { cohort: '', status: '' },
  search: '',
  sort: { key: 'name', direction: 1 },
  calendarFor: null,
  onImported: () => {},
};

const percent = (value) => (value === null || value === undefined ? '—' : `${Math.round(value * 100)}%`);

/** Builds the Study view into `container`; `onImported` runs after a CSV import enrolled people. */
export function showStudy(container, { onImported, reportError }) {
  view.onImported = onImported;
  view.reportError = reportError;
  container.replaceChildren(
    el('div#study.study', {}, el('h2', {}, 'Study'), filtersForm(), el('p#study-totals.muted', {}, 'Loading…')),
    el('div#study-charts.charts'),
    section('Participants', el('div#study-table-box')),
    el('div#study-calendar'),
    el(
      'div.columns',
      {},
      importPanel(afterImport, reportError),
      exportPanel(() => view.filter, reportError),
    ),
  );
  return refreshStudy();
}

async function afterImport() {
  await Promise.all([refreshStudy(), view.onImported()]);
}

/** Reads the overview again (filters applied on the server) and redraws everything but the forms. */
export async function refreshStudy() {
  if (!document.querySelector('#study')) return;
  try {
    const query = new URLSearchParams(Object.entries(view.filter).filter(([, value]) => value));
    view.overview = await api('GET', `/study/overview${query.size ? `?${query}` : ''}`);
    for (const cohort of Object.keys(view.overview.totals.by_cohort)) if (cohort) view.cohorts.add(cohort);
    renderCohortOptions();
    renderTotals();
    dayCharts(document.querySelector('#study-charts'), view.overview.series, view.overview.time_zone);
    renderTable();
    if (view.calendarFor) await showCalendar(view.calendarFor);
  } catch (error) {
    view.reportError(error);
  }
}

function filtersForm() {
  const change = (key) => (event) => {
    view.filter[key] = event.target.value;
    void refreshStudy();
  };
  return el(
    'form#study-filters.filters',
    { onsubmit: (event) => event.preventDefault() },
    el('label', { for: 'study-cohort' }, 'Cohort'),
    el('select#study-cohort', { onchange: change('cohort') }, el('option', { value: '' }, 'All cohorts')),
    el('label', { for: 'study-status' }, 'Status'),
    el(
      'select#study-status',
      { onchange: change('status') },
      el('option', { value: '' }, 'All statuses'),
      STATUSES.map((status) => el('option', { value: status }, status)),
    ),
    el('label', { for: 'study-search' }, 'Search'),
    el('input#study-search', {
      type: 'search',
      placeholder: 'name, phone, cohort or id',
      autocomplete: 'off',
      oninput: (event) => {
        view.search = event.target.value.trim().toLowerCase();
        renderTable();
      },
    }),
    el('button.small', { type: 'button', onclick: () => void refreshStudy() }, 'Refresh'),
  );
}

function renderCohortOptions() {
  const select = document.querySelector('#study-cohort');
  const known = new Set([...select.options].map((option) => option.value));
  for (const cohort of [...view.cohorts].sort())
    if (!known.has(cohort)) select.append(el('option', { value: cohort }, cohort));
}

function renderTotals() {
  const { totals, participants } = view.overview;
  const flagged = Object.entries(totals.flagged).map(([flag, count]) => `${count} ${FLAG_LABELS[flag] ?? flag}`);
  document.querySelector('#study-totals').textContent =
    `${participants.length} participant(s) · ${totals.prompts_sent} prompts sent · ${totals.done_count} done ` +
    `(${percent(totals.done_rate)}) · ${flagged.length ? `flagged: ${flagged.join(', ')}` : 'nobody flagged'}` +
    ` · days in ${view.overview.time_zone}`;
}

function renderTable() {
  const box = document.querySelector('#study-table-box');
  if (!box || !view.overview) return;
  const rows = sortRows(view.overview.participants.filter(matchesSearch));
  if (rows.length === 0) {
    box.replaceChildren(el('p.muted', {}, view.overview.participants.length ? 'Nobody matches.' : 'Nobody enrolled.'));
    return;
  }
  box.replaceChildren(
    el(
      'table#study-table.sortable',
      {},
      el('thead', {}, el('tr', {}, COLUMNS.map(headerCell))),
      el(
        'tbody',
        {},
        rows.map((p) =>
          el(
            'tr',
            { dataset: { id: p.id, flags: p.flags.join(' ') } },
            COLUMNS.map((column) => el('td', {}, column.cell ? column.cell(p) : String(column.value(p)))),
          ),
        ),
      ),
    ),
  );
}

function headerCell(column) {
  const sorted = view.sort.key === column.key;
  const sortState = sorted ? (view.sort.direction > 0 ? 'ascending' : 'descending') : 'none';
  const toggle = () => {
    view.sort = { key: column.key, direction: sorted ? -view.sort.direction : 1 };
    renderTable();
  };
  return el(
    'th',
    { scope: 'col', 'aria-sort': sortState },
    el(
      'button.sort',
      { type: 'button', onclick: toggle },
      column.label,
      sorted ? (view.sort.direction > 0 ? ' ▲' : ' ▼') : '',
    ),
  );
}

function matchesSearch(p) {
  if (!view.search) return true;
  return [p.name, p.phone_number, p.cohort, p.id].some((text) => text?.toLowerCase().includes(view.search));
}

/** Sorted by the chosen column; empty values always last, ties by name. */
function sortRows(rows) {
  const column = COLUMNS.find((candidate) => candidate.key === view.sort.key);
  const compare = (a, b) => {
    const [x, y] = [column.value(a), column.value(b)];
    if (x === y) return 0;
    if (x === null || x === undefined || x === '') return 1;
    if (y === null || y === undefined || y === '') return -1;
    const order = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
    return order * view.sort.direction;
  };
  return [...rows].sort((a, b) => compare(a, b) || String(a.name).localeCompare(String(b.name)));
}

function participantCell(p) {
  return el(
    'span.who',
    {},
    el('a', { href: `#/p/${encodeURIComponent(p.id)}` }, p.name || p.phone_number),
    el('span.muted', {}, ` ${p.phone_number}`),
    el(
      'button.small.calendar-button',
      {
        type: 'button',
        'aria-label': `Adherence calendar of ${p.name || p.phone_number}`,
        onclick: () => showCalendar(p.id),
      },
      'Calendar',
    ),
  );
}

function flagsCell(p) {
  return el(
    'span.tags',
    {},
    p.flags.map((flag) => el(`span.tag.flag.flag-${flag}`, { title: flag }, FLAG_LABELS[flag] ?? flag)),
  );
}

async function showCalendar(id) {
  view.calendarFor = id;
  const box = document.querySelector('#study-calendar');
  try {
    const participant = view.overview?.participants.find((p) => p.id === id);
    const adherence = await api('GET', `/study/participants/${encodeURIComponent(id)}/adherence`);
    box.replaceChildren(adherenceCalendar(adherence, participant?.name || participant?.phone_number || id));
  } catch (error) {
    view.reportError(error);
  }
}
