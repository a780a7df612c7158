// The Study view's pictures: per-day charts (uPlot, served from our own origin) and a
// participant's adherence calendar (plain elements). Each chart has its numbers as a table too.
import uPlot from './uplot.js';
import { el, section, table } from './render.js';

const COLORS = { response: '#0b5cad', done: '#1d6b3a', active: '#8a3ffc', enrolled: '#5a6370' };
const STATUS_LABELS = {
  done: 'done',
  replied: 'replied, not done',
  pending: 'prompt still open',
  no_reply: 'no reply',
  no_prompt: 'no prompt',
};

/** The study's days as charts: response and done rate, and active participants against enrolled. */
export function dayCharts(container, series, zone) {
  if (series.length === 0) {
    container.replaceChildren(el('p.muted', {}, 'No days to chart yet: enrol someone.'));
    return;
  }
  // Dates are calendar days of the reporting zone already: drawn as UTC midnights, labelled in UTC.
  const x = series.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000);
  const pct = (value) => (value === null ? null : Math.round(value * 1000) / 10);
  const rates = chartFigure('chart-rates', `Response and done rate per day (${zone})`);
  const active = chartFigure('chart-active', `Active participants per day (${zone})`);
  container.replaceChildren(rates.figure, active.figure, numbersTable(series));
  draw(rates.plot, [x, series.map((d) => pct(d.response_rate)), series.map((d) => pct(d.done_rate))], {
    series: [line('response rate %', COLORS.response), line('done rate %', COLORS.done)],
    y: { range: [0, 100] },
  });
  draw(active.plot, [x, series.map((d) => d.active_participants), series.map((d) => d.enrolled)], {
    series: [line('active participants', COLORS.active), line('enrolled', COLORS.enrolled, [4, 4])],
    y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
  });
}

function chartFigure(id, caption) {
  const plot = el('div.plot');
  return { plot, figure: el(`figure#${id}.chart`, {}, el('figcaption', {}, caption), plot) };
}

const line = (label, stroke, dash) => ({ label, stroke, width: 2, points: { size: 5 }, ...(dash ? { dash } : {}) });

function draw(target, data, { series, y }) {
  // The figure's width, known once it is in the page (the plot inside it is still empty).
  const width = Math.max(280, (target.parentElement?.clientWidth ?? 496) - 16);
  const options = {
    width,
    height: 200,
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
    scales: { x: { time: true }, y },
    series: [
      { label: 'day', value: (_u, seconds) => (seconds ? new Date(seconds * 1000).toISOString().slice(0, 10) : '—') },
      ...series,
    ],
    axes: [{ space: 60 }, { size: 44 }],
  };
  return new uPlot(options, data, target);
}

function numbersTable(series) {
  return el(
    'details.numbers',
    {},
    el('summary', {}, 'The numbers per day'),
    table(
      ['day', 'enrolled', 'prompts', 'replied', 'done', 'still open', 'messages', 'active'],
      series.map((d) => [
        d.date,
        String(d.enrolled),
        String(d.prompts_sent),
        String(d.prompts_replied),
        String(d.done),
        String(d.prompts_open),
        String(d.replies),
        String(d.active_participants),
      ]),
    ),
  );
}

/** One cell per day since enrolment, weeks from Monday, in the participant's zone. */
export function adherenceCalendar(adherence, who) {
  const days = adherence.days;
  const firstWeekday = days.length ? (new Date(`${days[0].date}T00:00:00Z`).getUTCDay() + 6) % 7 : 0;
  const cells = [
    ...['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((name) =>
      el('li.weekday', { 'aria-hidden': 'true' }, name),
    ),
    ...Array.from({ length: firstWeekday }, () => el('li.blank', { 'aria-hidden': 'true' })),
    ...days.map((day) => {
      const text =
        `${day.date}: ${STATUS_LABELS[day.status]} ` +
        `(${day.prompts} prompt(s), ${day.done} done, ${day.replies} message(s))`;
      return el(
        `li.day.day-${day.status}`,
        { title: text, 'aria-label': text, dataset: { date: day.date, status: day.status } },
        day.date.slice(8),
      );
    }),
  ];
  return section(
    `Adherence calendar: ${who}`,
    el('p.muted', {}, `Days in ${adherence.time_zone} · current streak ${adherence.current_streak}`),
    el('ol#calendar.calendar', {}, cells),
    el(
      'ul.legend',
      {},
      Object.entries(STATUS_LABELS).map(([status, label]) =>
        el('li', {}, el(`span.swatch.day-${status}`), ` ${label}`),
      ),
    ),
  );
}
