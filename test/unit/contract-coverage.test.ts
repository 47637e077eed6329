/**
 * The coverage arithmetic (src/contract/coverage.ts) and its printed block (coverage-block.ts),
 * the attempt cap a run uses (`resolveAttemptCap`), and the count of real files
 * (src/planning/coverage-scan.ts), whose numbers must be the files' line counts, with omissions
 * counted apart from failures.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveAttemptCap } from '../../src/contract/attempts.js';
import { coverageBlock } from '../../src/contract/coverage-block.js';
import {
  addKey,
  coverageOf,
  dispositionOf,
  emptyCounts,
  reopensWith,
  type CoverageContext,
  type KeyTally,
} from '../../src/contract/coverage.js';
import { reconciliationGap } from '../../src/contract/coverage-reconcile.js';
import { countCoverage, scanKeys } from '../../src/planning/coverage-scan.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-coverage-');

const tally = (t: Partial<KeyTally>): KeyTally => ({ main: 0, counted: 0, terminal: false, omitted: false, ...t });

const context = (over: Partial<CoverageContext> = {}): CoverageContext => ({
  run_id: 'wf',
  state: 'finished',
  expected: null,
  not_persisted: 0,
  outcomes_recorded: 0,
  cap: { max_rollout_attempts: 2, attempt_extension: 0 },
  retry_terminal_timeouts: false,
  dispatch_longest_first: false,
  output: '/o.jsonl',
  failures: '/o_failures.jsonl',
  ...over,
});

describe('dispositions', () => {
  it('a scored key is a success whatever its sidecar says; an omission is neither failed nor retried', () => {
    expect(dispositionOf(tally({ main: 1, counted: 5, terminal: true }), 2)).toBe('success');
    expect(dispositionOf(tally({ omitted: true, terminal: true }), 2)).toBe('omitted');
    expect(dispositionOf(tally({ counted: 1, terminal: true }), 2)).toBe('terminal');
    expect(dispositionOf(tally({ counted: 2 }), 2)).toBe('exhausted');
    expect(dispositionOf(tally({ counted: 1 }), 2)).toBe('retryable');
    expect(dispositionOf(tally({}), 2)).toBe('none');
  });

  it('an extension reopens exactly the non-terminal keys at the old cap and below the new one', () => {
    expect(reopensWith(tally({ counted: 2 }), 2, 1)).toBe(true);
    expect(reopensWith(tally({ counted: 3 }), 2, 1)).toBe(false); // still over 3
    expect(reopensWith(tally({ counted: 3 }), 2, 2)).toBe(true);
    expect(reopensWith(tally({ counted: 1 }), 2, 1)).toBe(false); // already retryable
    expect(reopensWith(tally({ counted: 2, terminal: true }), 2, 5)).toBe(false);
    expect(reopensWith(tally({ omitted: true, terminal: true }), 0, 5)).toBe(false);
    expect(reopensWith(tally({ main: 1, counted: 2 }), 2, 5)).toBe(false);
  });
});

describe('coverageOf', () => {
  it('splits the expected rollouts into dispositions that add up; pending ones keep it incomplete', () => {
    const c = emptyCounts();
    for (const t of [
      tally({ main: 1 }),
      tally({ main: 1 }),
      tally({ counted: 2 }),
      tally({ counted: 1 }),
      tally({ omitted: true, terminal: true }),
    ])
      addKey(c, t, 2);
    Object.assign(c, { main_rows: 2, sidecar_rows: 4, omission_rows: 1 });
    const cov = coverageOf(c, context({ expected: 8, not_persisted: 1 }));
    expect(cov).toMatchObject({
      expected: 8,
      successful: 2,
      failed: 2,
      intentionally_omitted: 1,
      unknown: 1,
      never_dispatched: 2,
      attempts: 5,
      counted_failures: 3,
      attempts_exhausted: 1,
      retryable: 1,
      attempt_cap: 2,
      complete: false,
    });
    // Pending: 1 retryable + 1 unknown + 2 never dispatched of 8.
    expect(cov.completion_fraction).toBe(0.5);
  });

  it('counted_failures are the failures the budget counts: terminal rows and omissions are not; attempts keep terminal rows', () => {
    const c = emptyCounts();
    for (const t of [
      tally({ main: 1 }),
      tally({ counted: 1 }),
      tally({ counted: 2, terminal: true }),
      tally({ omitted: true, terminal: true }),
    ])
      addKey(c, t, 3);
    // Sidecar: 1 retryable failure, 2 rows of a terminal key (one stamped terminal), 1 omission.
    Object.assign(c, { main_rows: 1, sidecar_rows: 4, omission_rows: 1, terminal_rows: 1 });
    const cov = coverageOf(c, context({ expected: 4 }));
    expect(cov).toMatchObject({ attempts: 4, counted_failures: 2, failed: 2, intentionally_omitted: 1, reconciled: true });
    expect(cov.reporting.terminal_rows).toBe(1);
  });

  it('names its selection policy and reconciles expected with the five dispositions', () => {
    const c = emptyCounts();
    addKey(c, tally({ main: 1 }), 2);
    const cov = coverageOf(c, context({ expected: 3, not_persisted: 1 }));
    expect(cov.selection_policy).toBe('latest_allocated');
    expect(cov.reconciled).toBe(true);
    expect(reconciliationGap(cov)).toBeNull();
    expect(reconciliationGap({ ...cov, expected: 4 })).toBe(
      'expected 4 != 3 = 1 successful + 0 failed + 0 intentionally_omitted + 1 unknown + 1 never_dispatched',
    );
    // A file without the numbers (another tool's) has nothing to check.
    expect(reconciliationGap({ expected: 4 })).toBeNull();
  });

  it('is complete when every rollout is scored, omitted or failed for good; nothing expected is complete', () => {
    const c = emptyCounts();
    for (const t of [tally({ main: 1 }), tally({ counted: 2 }), tally({ omitted: true, terminal: true })]) addKey(c, t, 2);
    expect(coverageOf(c, context({ expected: 3 }))).toMatchObject({ complete: true, completion_fraction: 1, never_dispatched: 0 });
    expect(coverageOf(emptyCounts(), context({ expected: 0 }))).toMatchObject({ complete: true, completion_fraction: 1 });
  });
});

describe('coverageBlock', () => {
  it('of a live run with rollouts at the cap: says so, and no advice until the run ends', () => {
    const c = emptyCounts();
    for (const t of [tally({ main: 1 }), tally({ counted: 2 })]) addKey(c, t, 2);
    const cov = coverageOf(c, context({ expected: 2 }));
    expect(coverageBlock(cov, '/o_coverage.json', true)[3]).toBe(
      '  not complete so far: 1 rollout(s) at the attempt cap are missing from the score (the run is still writing); 0 outcome row(s) recorded by this run',
    );
    expect(coverageBlock(cov, '/o_coverage.json')[3]).toContain('run the same command with --resume --extend-attempts N');
  });
});

describe('resolveAttemptCap', () => {
  const file = '/runs/out_coverage.json';
  it('a resumed run keeps its saved cap and says so when today differs; the same cap says nothing', () => {
    const saved = { max_rollout_attempts: 2, attempt_extension: 1 };
    const r = resolveAttemptCap({ value: 5, from: '--max-attempts' }, saved, { resume: true, coverageFile: file });
    expect(r.cap).toEqual(saved);
    expect(r.notices).toEqual([
      `Attempt cap: 3, as saved with the run in ${file}, not 5 from --max-attempts; to raise it, pass --extend-attempts N`,
    ]);
    expect(resolveAttemptCap({ value: 3, from: 'the default' }, saved, { resume: true, coverageFile: file }).notices).toEqual([]);
  });

  it('--extend-attempts adds to the saved extension; a run with nothing saved saves today', () => {
    const r = resolveAttemptCap(
      { value: 9, from: 'NEMO_GYM_MAX_ROLLOUT_ATTEMPTS' },
      { max_rollout_attempts: 2, attempt_extension: 1 },
      {
        resume: true,
        extend: 2,
        coverageFile: file,
      },
    );
    expect(r.cap).toEqual({ max_rollout_attempts: 2, attempt_extension: 3 });
    expect(r.notices[1]).toBe(`Attempt cap raised by 2: 5 (2 saved + 3 extension), recorded in the run and in ${file}`);
    expect(resolveAttemptCap({ value: 4, from: 'the default' }, null, { resume: true, coverageFile: file }).cap).toEqual({
      max_rollout_attempts: 4,
      attempt_extension: 0,
    });
    // Not resuming: a saved cap is not read back.
    expect(
      resolveAttemptCap(
        { value: 4, from: 'the default' },
        { max_rollout_attempts: 1, attempt_extension: 0 },
        { resume: false, coverageFile: file },
      ).cap.max_rollout_attempts,
    ).toBe(4);
  });
});

describe('countCoverage over real files', () => {
  const row = (t: number, r: number, extra = '') => `{"_ng_task_index":${t},"_ng_rollout_index":${r},"reward":1.0${extra}}`;
  const fail = (t: number, r: number, extra = '') => row(t, r, `,"_ng_failure_class":"judge_failed"${extra}`);
  const omit = (t: number, r: number) =>
    row(t, r, ',"_ng_failure_class":"skipped","_ng_failure_terminal":true,"_ng_omitted":true,"_ng_failure_message":"not scored"');

  it('counts keys from the lines (sorts spilled to disk or not), omissions apart, and a cut-off last line left out', async () => {
    const dir = tmp.freshDir();
    const output = join(dir, 'o.jsonl');
    const sidecar = join(dir, 'o_failures.jsonl');
    writeFileSync(output, [row(0, 0), row(0, 1), row(1, 0), ''].join('\n') + '{"_ng_task_index":9,');
    writeFileSync(
      sidecar,
      [fail(0, 1), fail(2, 0), fail(2, 0), fail(3, 0), fail(4, 0, ',"_ng_failure_terminal":true'), omit(5, 0), '', '']
        .join('\n')
        .replace(fail(3, 0), row(3, 0, ',"_ng_failure_class":"timeout"')),
    );
    const c = await countCoverage({ output, sidecar }, {}, 2, dir);
    expect(c).toEqual({
      successful: 3,
      masked: 0,
      unscored: 0,
      failed: 3,
      intentionally_omitted: 1,
      attempts_exhausted: 1,
      retryable: 1,
      terminal_failures: 1,
      main_rows: 3,
      sidecar_rows: 6,
      omission_rows: 1,
      terminal_rows: 1,
      failed_attempts_by_class: { judge_failed: 4, timeout: 1 },
    });
    expect(coverageOf(c, context({ expected: 7 })).failure_export_metrics).toEqual({
      'failures/failed_attempts': 5,
      'failures/failed_rollouts': 3,
      'failures/terminal': 1,
      'failures/retryable': 1,
      'failures/budget_exhausted': 1,
      'failures/intentionally_omitted': 1,
      'failures/failed_attempts/judge_failed': 4,
      'failures/failed_attempts/timeout': 1,
    });
    const keys: string[] = [];
    await scanKeys({ output, sidecar }, {}, dir, (k) => keys.push(k), { maxRecords: 2 });
    expect(keys).toHaveLength(7);
    // The scratch directory is gone.
    expect(readdirSync(dir).sort()).toEqual(['o.jsonl', 'o_failures.jsonl']);
  });

  it('the scored rollouts split into measured, masked (mask_sample with a reward) and unscored (no numeric reward), as the run store splits them', async () => {
    const dir = tmp.freshDir();
    const output = join(dir, 'o.jsonl');
    const sidecar = join(dir, 'o_failures.jsonl');
    const key = (t: number) => `"_ng_task_index":${t},"_ng_rollout_index":0`;
    writeFileSync(
      output,
      [
        `{${key(0)},"reward":1.0}`,
        `{${key(1)},"reward":0,"mask_sample":true}`,
        `{${key(2)},"reward":null}`,
        `{${key(3)},"reward":true}`, // a bool is no reward (Python's type check)
        `{${key(4)},"mask_sample":true}`, // masked without a reward: unscored
        `{${key(5)},"reward":-0.5,"mask_sample":0}`,
      ].join('\n') + '\n',
    );
    writeFileSync(sidecar, `{${key(6)},"_ng_failure_class":"judge_failed"}\n`);
    const c = await countCoverage({ output, sidecar }, {}, 2, dir);
    const cov = coverageOf(c, context({ expected: 7 }));
    expect({ successful: cov.successful, measured: cov.measured, masked: cov.masked, unscored: cov.unscored }).toEqual({
      successful: 6,
      measured: 2,
      masked: 1,
      unscored: 3,
    });
    expect(cov.reconciled).toBe(true);
  });
});
