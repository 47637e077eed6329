/**
 * NeMo Gym's `raw_outcomes_are_selected(path, artifacts)` (src/io/run-selection.ts): a manifest
 * alone does not require a different reader; superseded rows (an answer superseded by an
 * interrupted attempt too) do; only the artifacts the caller reads are compared, the whole run
 * is validated. Plain runs and managed runs (written by Python as NeMo Gym's store writes them).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rawOutcomesAreSelected } from '../../src/io/run-selection.js';
import { failure, input, result, writeManagedRun } from '../helpers/managed-run.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const { freshDir } = useTempRoot('reverify-raw-');
const row = (t: number, extra = '') => `{"_ng_task_index": ${t}, "_ng_rollout_index": 0${extra}}`;

function plainRun(main: string[], side: string[]): { out: string; side: string } {
  const d = freshDir();
  writeFileSync(join(d, 'out.jsonl'), main.map((l) => l + '\n').join(''));
  writeFileSync(join(d, 'out_failures.jsonl'), side.map((l) => l + '\n').join(''));
  return { out: join(d, 'out.jsonl'), side: join(d, 'out_failures.jsonl') };
}

describe('rawOutcomesAreSelected: plain runs', () => {
  it('one row per rollout across both files: true', async () => {
    const r = plainRun([row(0)], [row(1, ', "_ng_failure_class": "judge_failed"')]);
    expect(await rawOutcomesAreSelected(r.out)).toBe(true);
  });
  it('a failure superseded by a later success: false; reading only the results: true; only the sidecar: false', async () => {
    const r = plainRun([row(0)], [row(0, ', "_ng_failure_class": "judge_failed"')]);
    expect(await rawOutcomesAreSelected(r.out)).toBe(false);
    expect(await rawOutcomesAreSelected(r.out, [r.out])).toBe(true);
    expect(await rawOutcomesAreSelected(r.out, [r.side])).toBe(false);
  });
  it('a file that is not the run: one error line', async () => {
    const r = plainRun([row(0)], []);
    await expect(rawOutcomesAreSelected(r.out, ['/elsewhere.jsonl'])).rejects.toThrow(
      /^--artifacts: '\/elsewhere.jsonl' is not an outcome file of this run/,
    );
  });
});

describe('rawOutcomesAreSelected: managed runs', () => {
  it('a manifest alone does not require a different reader: true', async () => {
    const dir = freshDir();
    writeManagedRun({
      dir,
      materialized: [input(0, 0), input(1, 0)],
      next_attempt: { '0-0': 1, '1-0': 1 },
      outcomes: [{ file: 'results', row: result(0, 0, 0, 1) }],
    });
    expect(await rawOutcomesAreSelected(join(dir, 'out.jsonl'))).toBe(true);
  });
  it('an answer superseded by an interrupted attempt (allocated, nothing saved): false, also for the results alone', async () => {
    const dir = freshDir();
    writeManagedRun({
      dir,
      materialized: [input(0, 0)],
      next_attempt: { '0-0': 2 },
      outcomes: [{ file: 'results', row: result(0, 0, 0, 1) }],
    });
    const out = join(dir, 'out.jsonl');
    expect(await rawOutcomesAreSelected(out)).toBe(false);
    expect(await rawOutcomesAreSelected(out, [out])).toBe(false);
    expect(await rawOutcomesAreSelected(out, [join(dir, 'out_failures.jsonl')])).toBe(true);
  });
  it('a retried failure: the sidecar holds a superseded row; the results alone are selected', async () => {
    const dir = freshDir();
    writeManagedRun({
      dir,
      materialized: [input(0, 0)],
      next_attempt: { '0-0': 2 },
      outcomes: [
        { file: 'failures', row: failure(0, 0, 0, 'transient') },
        { file: 'results', row: result(0, 0, 1, 1) },
      ],
    });
    const out = join(dir, 'out.jsonl');
    expect(await rawOutcomesAreSelected(out)).toBe(false);
    expect(await rawOutcomesAreSelected(out, [out])).toBe(true);
  });
  it('the whole run is validated even when one file is compared: a bad sidecar row stops it', async () => {
    const dir = freshDir();
    writeManagedRun({
      dir,
      materialized: [input(0, 0)],
      next_attempt: { '0-0': 1 },
      outcomes: [
        { file: 'results', row: result(0, 0, 0, 1) },
        { file: 'failures', row: failure(0, 0, 0, 'transient', { _ng_run_id: 'other' }) },
      ],
    });
    const out = join(dir, 'out.jsonl');
    await expect(rawOutcomesAreSelected(out, [out])).rejects.toThrow(
      `${join(dir, 'out_failures.jsonl')}:1: the outcome belongs to a different run`,
    );
  });
  it('a cut-off last line is no outcome, but a plain reader fails on it: false', async () => {
    const dir = freshDir();
    writeManagedRun({
      dir,
      materialized: [input(0, 0)],
      next_attempt: { '0-0': 1 },
      outcomes: [{ file: 'results', row: result(0, 0, 0, 1) }],
      tail: { file: 'results', text: '{"_ng_task' },
    });
    expect(await rawOutcomesAreSelected(join(dir, 'out.jsonl'))).toBe(false);
  });
  it('two different outcomes of one attempt: one error line naming both places', async () => {
    const dir = freshDir();
    writeManagedRun({
      dir,
      materialized: [input(0, 0)],
      next_attempt: { '0-0': 1 },
      outcomes: [
        { file: 'results', row: result(0, 0, 0, 1) },
        { file: 'results', row: result(0, 0, 0, 0) },
      ],
    });
    const out = join(dir, 'out.jsonl');
    await expect(rawOutcomesAreSelected(out)).rejects.toThrow(
      `${out}:2: a second, different outcome of rollout '0-0' attempt 0 (first at ${out}:1)`,
    );
  });

  it('rows that do not fit the manifest: one error line naming file:line', async () => {
    const cases: Array<[Array<{ file: 'results' | 'failures'; row: Record<string, unknown> }>, string]> = [
      [
        [{ file: 'results', row: result(0, 0, 3, 1.0) }],
        "out.jsonl:1: rollout '0-0' attempt 3 has no reserved attempt in the run manifest",
      ],
      [[{ file: 'failures', row: result(0, 0, 0, 1.0) }], 'out_failures.jsonl:1: a result (no _ng_failure_class) in the failures sidecar'],
      [[{ file: 'results', row: failure(0, 0, 0, 'transient') }], 'out.jsonl:1: a failure (it has _ng_failure_class) in the results file'],
      [[{ file: 'results', row: result(7, 0, 0, 1.0) }], "out.jsonl:1: rollout '7-0' is not in this run's materialized inputs"],
    ];
    for (const [outcomes, message] of cases) {
      const dir = freshDir();
      writeManagedRun({ dir, materialized: [input(0, 0)], next_attempt: { '0-0': 1 }, outcomes });
      await expect(rawOutcomesAreSelected(join(dir, 'out.jsonl'))).rejects.toThrow(join(dir, message));
    }
  });
});
