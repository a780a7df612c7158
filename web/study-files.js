// Files in and out of a study: the CSV import (a dry run first, its report, then the real import)
// and the export download (a ZIP of CSV files with their codebook).
import { apiDownload, ApiError, apiText } from './api.js';
import { el, section, table } from './render.js';

/** The CSV upload: "Check" runs the import as a dry run; only a clean check offers the real import. */
export function importPanel(onImported, reportError) {
  let checked = null; // the text that passed the dry run
  const report = el('div#import-report', { 'aria-live': 'polite' });
  const run = el('button#import-run', { type: 'button', hidden: true }, 'Enrol');
  const file = el('input#import-file', {
    type: 'file',
    accept: '.csv,text/csv',
    onchange: () => {
      checked = null;
      run.hidden = true;
      report.replaceChildren();
    },
  });
  const check = async () => {
    const chosen = file.files?.[0];
    if (!chosen) return report.replaceChildren(el('p.error', {}, 'Choose a CSV file first.'));
    const text = await chosen.text();
    const result = await importCsv(text, true, report, reportError);
    checked = result ? text : null;
    run.hidden = !result;
    run.textContent = result ? `Enrol ${result.result.would_enroll} participant(s)` : 'Enrol';
  };
  run.addEventListener('click', async () => {
    if (checked === null) return;
    const result = await importCsv(checked, false, report, reportError);
    run.hidden = true;
    checked = null;
    if (result) await onImported();
  });
  return section(
    'Enrol from a CSV file',
    el(
      'p.muted',
      {},
      'A header row with phone_number and any of name, timezone, cohort, gender, ethnicity, background, ' +
        'channel, flow. ' +
        'The file is checked first; nobody is enrolled until you confirm, and then everyone or nobody.',
    ),
    el('label', { for: 'import-file' }, 'CSV file'),
    file,
    el('div.actions', {}, el('button#import-check', { type: 'button', onclick: check }, 'Check the file'), run),
    report,
  );
}

async function importCsv(text, dryRun, report, reportError) {
  try {
    const envelope = await apiText(
      'POST',
      `/conversation/participants/import${dryRun ? '?dry_run=true' : ''}`,
      text,
      'text/csv; charset=utf-8',
    );
    report.replaceChildren(el('p.ok', {}, envelope.message));
    return envelope;
  } catch (error) {
    // Not the file's fault (no token, a server error): said where every other error is said.
    if (!(error instanceof ApiError) || error.status !== 400) return reportError(error);
    report.replaceChildren(
      el('p.error', {}, error.message),
      error.problems.length
        ? table(
            ['row', 'field', 'problem'],
            error.problems.map((problem) => [String(problem.row ?? ''), problem.field ?? '', problem.message]),
          )
        : null,
    );
    return null;
  }
}

/**
 * The export: the current filters, optionally a window of days and de-identified, downloaded as
 * the server names it.
 */
export function exportPanel(currentFilter, reportError) {
  const deidentify = el('input#export-deidentify', { type: 'checkbox' });
  const from = el('input#export-from', { type: 'date' });
  const to = el('input#export-to', { type: 'date' });
  const status = el('p#export-status.muted', { 'aria-live': 'polite' });
  const download = async () => {
    const query = new URLSearchParams(Object.entries(currentFilter()).filter(([, value]) => value));
    if (from.value) query.set('from', from.value);
    if (to.value) query.set('to', to.value);
    if (deidentify.checked) query.set('deidentify', 'true');
    status.textContent = 'Preparing the export…';
    try {
      const { name, blob } = await apiDownload(`/study/export${query.size ? `?${query}` : ''}`);
      const link = el('a', { href: URL.createObjectURL(blob), download: name });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
      status.textContent = `Downloaded ${name} (${Math.ceil(blob.size / 1024)} KB).`;
    } catch (error) {
      status.textContent = '';
      reportError(error);
    }
  };
  return section(
    'Export',
    el(
      'p.muted',
      {},
      'Every file of the study (participants, messages, prompts, poll answers, turns, deliveries…) as CSV in a ZIP, ' +
        'with codebook.csv naming every column. The cohort and status filters above apply; with a first or last ' +
        "day (days in the study's time zone, both included), every file but participants.csv keeps only that window.",
    ),
    el('div.period', {}, el('label', {}, 'First day ', from), el('label', {}, 'Last day ', to)),
    el('label.checkbox', {}, deidentify, ' de-identified (no phone numbers, names or free text)'),
    el('button#export-download', { type: 'button', onclick: download }, 'Download the export (ZIP)'),
    status,
  );
}
