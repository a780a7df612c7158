import { describe, expect, it } from 'vitest';
import { parseExportArgs } from './export-args.ts';

describe('parseExportArgs (npm run export)', () => {
  it('reads the options; the window stays text until the study zone is known', () => {
    expect(
      parseExportArgs([
        '--out',
        'dir',
        '--status',
        'active',
        '--cohort',
        'arm-A',
        '--from',
        '2026-06-01',
        '--to',
        '2026-06-07T23:59:59-04:00',
        '--deidentify',
      ]),
    ).toEqual({
      ok: true,
      args: {
        out: 'dir',
        status: 'active',
        cohort: 'arm-A',
        from: '2026-06-01',
        to: '2026-06-07T23:59:59-04:00',
        deidentify: true,
      },
    });
    expect(parseExportArgs(['--out', 'dir'])).toEqual({
      ok: true,
      args: { out: 'dir', status: undefined, cohort: undefined, from: undefined, to: undefined, deidentify: false },
    });
  });

  it('names the option that is wrong', () => {
    expect(parseExportArgs([])).toEqual({ ok: false, help: false, problem: '--out: is required' });
    expect(parseExportArgs(['--out', 'd', '--status', 'gone'])).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^--status: must be one of active/),
    });
    expect(parseExportArgs(['--out', 'd', '--cohort', ''])).toMatchObject({ ok: false, problem: /^--cohort: / });
    expect(parseExportArgs(['--out', 'd', '--since', 'x'])).toMatchObject({ ok: false, problem: /--since/ });
    expect(parseExportArgs(['--help'])).toEqual({ ok: false, help: true });
  });
});
