/**
 * Issue 31 item 1: `reverify read` reads a NeMo Gym managed run (manifest + results + sidecar, as
 * its run store writes them: test/helpers/managed-run-writer.py) through its manifest, with the
 * store's keyword options and a metadata-only mode, through the real command; nothing is written.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { failure, input, result, RUN_ID, writeManagedRun, type Row } from '../helpers/managed-run.js';
import { tempDir } from '../helpers/temp-dirs.js';

const snapshot = (dir: string) => Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'base64')]));
const lines = (text: string) => text.split('\n').filter((l) => l !== '');
const compact = (row: Row) => JSON.stringify(row); // Python's compact dump of these rows is the same text

/** Five rollouts: a retried success, an answer superseded by an interrupted attempt, a terminal timeout, one never dispatched, one omitted (explicit id). */
function fiveRollouts(dir: string) {
  const alpha = { _ng_rollout_id: 'alpha' };
  const rows = {
    firstTry: failure(0, 0, 0, 'transient'),
    retried: result(0, 0, 1, 1.0),
    interrupted: result(1, 0, 0, 0.0),
    timeout: failure(2, 0, 0, 'timeout_exceeded', { _ng_failure_terminal: true }),
    omitted: failure(4, 0, 0, 'skipped', { ...alpha, _ng_failure_terminal: true, _ng_omitted: true, _ng_failure_message: 'no image' }),
  };
  writeManagedRun({
    dir,
    materialized: [input(0, 0), input(1, 0), input(2, 0), input(3, 0), input(4, 0, alpha)],
    next_attempt: { '0-0': 2, '1-0': 2, '2-0': 1, alpha: 1 },
    outcomes: [
      { file: 'failures', row: rows.firstTry },
      { file: 'results', row: rows.interrupted },
      { file: 'failures', row: rows.timeout },
      { file: 'failures', row: rows.omitted },
      { file: 'results', row: rows.retried },
    ],
  });
  return rows;
}

describe('reverify read of a managed run', () => {
  it('selects the latest allocated attempt: success, failure, omitted; unknown and never dispatched counted; nothing written', async () => {
    const dir = tempDir();
    const rows = fiveRollouts(dir);
    const out = join(dir, 'out.jsonl');
    const before = snapshot(dir);
    const success = await runCli(['read', '-o', out, '--disposition', 'success'], {});
    expect(success.code).toBe(0);
    expect(lines(success.stdout)).toEqual([compact(rows.retried)]); // not the answer of 1-0 its interrupted attempt superseded
    expect(success.stderr.trim()).toBe(
      `Selected outcomes of ${out} (managed run ${RUN_ID}): 1 success, 1 failure, 1 omitted, 1 unknown, 1 never dispatched. raw_outcomes_are_selected: false: 2 superseded row(s); read the selected outcomes with \`reverify read\`, not the raw files.`,
    );
    const failed = await runCli(['read', '-o', out, '--disposition', 'failure'], {});
    expect(lines(failed.stdout)).toEqual([compact(rows.timeout)]);
    const omitted = await runCli(['read', '-o', out, '--disposition', 'omitted'], {});
    expect(lines(omitted.stdout)).toEqual([compact(rows.omitted)]);
    const all = await runCli(['read', '-o', out, '--json'], {});
    expect(lines(all.stdout)).toEqual([compact(rows.retried), compact(rows.timeout), compact(rows.omitted)]); // materialized order
    expect(JSON.parse(all.stderr)).toMatchObject({
      counts: { success: 1, failure: 1, omitted: 1, unknown: 1 },
      superseded: 2,
      raw_outcomes_are_selected: false,
      terminal_failures: 1,
      managed: { run_id: RUN_ID, never_dispatched: 1, legacy_import: false, retry_terminal_timeouts: false },
    });
    expect(snapshot(dir)).toEqual(before);
  });

  it('--records: identity, attempt, file, line and byte slice of each selected outcome, no row contents; --skip-keys trims rows', async () => {
    const dir = tempDir();
    const rows = fiveRollouts(dir);
    const out = join(dir, 'out.jsonl');
    const records = await runCli(['read', '-o', out, '--records'], {});
    expect(records.code).toBe(0);
    const meta = lines(records.stdout).map((l) => JSON.parse(l) as { file: string; offset: number; length: number });
    expect(meta).toEqual([
      {
        rollout_id: '0-0',
        attempt: 1,
        disposition: 'success',
        file: out,
        line: 2,
        offset: expect.any(Number),
        length: compact(rows.retried).length + 1,
      },
      {
        rollout_id: '2-0',
        attempt: 0,
        disposition: 'failure',
        file: join(dir, 'out_failures.jsonl'),
        line: 2,
        offset: compact(rows.firstTry).length + 1,
        length: compact(rows.timeout).length + 1,
      },
      {
        rollout_id: 'alpha',
        attempt: 0,
        disposition: 'omitted',
        file: join(dir, 'out_failures.jsonl'),
        line: 3,
        offset: expect.any(Number),
        length: compact(rows.omitted).length + 1,
      },
    ]);
    for (const m of meta)
      expect(
        JSON.parse(
          readFileSync(m.file)
            .subarray(m.offset, m.offset + m.length)
            .toString(),
        ),
      ).toBeTruthy();
    expect(records.stdout).not.toContain('answer');
    const trimmed = await runCli(['read', '-o', out, '--disposition', 'success', '--skip-keys', 'response,responses_create_params'], {});
    const { response: _r, responses_create_params: _p, ...rest } = rows.retried;
    expect(lines(trimmed.stdout)).toEqual([compact(rest)]);
  });

  it('a manifest alone does not require a different reader: raw true with one outcome per rollout; --artifacts compares only the files read', async () => {
    const dir = tempDir();
    const out = join(dir, 'out.jsonl');
    writeManagedRun({
      dir,
      materialized: [input(0, 0), input(1, 0)],
      next_attempt: { '0-0': 1, '1-0': 1 },
      outcomes: [
        { file: 'results', row: result(0, 0, 0, 1.0) },
        { file: 'failures', row: failure(1, 0, 0, 'judge_failed') },
      ],
    });
    const clean = await runCli(['read', '-o', out], {});
    expect(clean.stderr).toContain('raw_outcomes_are_selected: true: a plain JSONL reader may read');
    // A retried failure: the sidecar's first row is superseded; the results file alone is still raw-selected.
    const dir2 = tempDir();
    const out2 = join(dir2, 'out.jsonl');
    writeManagedRun({
      dir: dir2,
      materialized: [input(0, 0)],
      next_attempt: { '0-0': 2 },
      outcomes: [
        { file: 'failures', row: failure(0, 0, 0, 'judge_failed') },
        { file: 'results', row: result(0, 0, 1, 1.0) },
      ],
    });
    expect((await runCli(['read', '-o', out2], {})).stderr).toContain('raw_outcomes_are_selected: false: 1 superseded row(s)');
    expect((await runCli(['read', '-o', out2, '--artifacts', out2], {})).stderr).toContain('raw_outcomes_are_selected: true');
    const stray = await runCli(['read', '-o', out2, '--artifacts', join(dir2, 'other.jsonl')], {});
    expect(stray.code).toBe(1);
    expect(stray.stderr.trim().split('\n')).toHaveLength(1);
    expect(stray.stderr).toContain(`--artifacts: '${join(dir2, 'other.jsonl')}' is not an outcome file of this run`);
  });

  it('rows that do not fit the manifest stop the read with one line naming file:line', async () => {
    // The other cases (an attempt never reserved, a result in the sidecar, an unknown rollout): test/unit/raw-outcomes.test.ts.
    const cases: Array<[string, Array<{ file: 'results' | 'failures'; row: Row }>, string]> = [
      [
        'another run',
        [{ file: 'results', row: result(0, 0, 0, 1.0, { _ng_run_id: 'other' }) }],
        'out.jsonl:1: the outcome belongs to a different run',
      ],
    ];
    for (const [, outcomes, message] of cases) {
      const dir = tempDir();
      writeManagedRun({ dir, materialized: [input(0, 0)], next_attempt: { '0-0': 1 }, outcomes });
      const r = await runCli(['read', '-o', join(dir, 'out.jsonl')], {});
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(join(dir, message));
    }
    // Materialized inputs changed after the manifest was written: its digest tells.
    const dir = tempDir();
    writeManagedRun({ dir, materialized: [input(0, 0)], next_attempt: { '0-0': 1 }, outcomes: [] });
    writeFileSync(join(dir, 'out_materialized_inputs.jsonl'), JSON.stringify(input(0, 0, { extra: 1 })) + '\n');
    const changed = await runCli(['read', '-o', join(dir, 'out.jsonl')], {});
    expect(changed.stderr.trim()).toBe(
      `Error: ${join(dir, 'out_materialized_inputs.jsonl')}: the saved materialized inputs do not match the run manifest's digest; restore them from backup`,
    );
  });

  it('a legacy run (materialized inputs, no manifest) is imported: rows numbered as written; --retry-terminal-timeouts; --no-import-legacy', async () => {
    const dir = tempDir();
    const out = join(dir, 'out.jsonl');
    const untagged = (row: Row) => {
      const { _ng_run_id: _id, _ng_attempt_index: _a, ...rest } = row;
      return rest;
    };
    writeManagedRun({
      dir,
      manifest: false,
      materialized: [input(0, 0), input(1, 0)],
      outcomes: [
        { file: 'failures', row: untagged(failure(0, 0, 0, 'judge_failed')) },
        { file: 'failures', row: untagged(failure(1, 0, 0, 'timeout_exceeded', { _ng_failure_terminal: true })) },
        { file: 'results', row: untagged(result(0, 0, 0, 1.0)) },
      ],
    });
    const legacy = await runCli(['read', '-o', out, '--json'], {});
    expect(legacy.code).toBe(0);
    expect(JSON.parse(legacy.stderr)).toMatchObject({
      counts: { success: 1, failure: 1, omitted: 0, unknown: 0 },
      terminal_failures: 1,
      managed: { run_id: null, never_dispatched: 0, legacy_import: true, retry_terminal_timeouts: false },
    });
    const records = await runCli(['read', '-o', out, '--records', '--disposition', 'success'], {});
    expect(JSON.parse(lines(records.stdout)[0])).toMatchObject({ rollout_id: '0-0', attempt: 1 }); // after its sidecar row (attempt 0)
    const retry = await runCli(['read', '-o', out, '--json', '--retry-terminal-timeouts'], {});
    expect(JSON.parse(retry.stderr)).toMatchObject({ terminal_failures: 0, managed: { retry_terminal_timeouts: true } });
    const plain = await runCli(['read', '-o', out, '--json', '--no-import-legacy'], {});
    expect(JSON.parse(plain.stderr)).toMatchObject({ counts: { success: 1, failure: 1 }, managed: null });
  });

  it('a row stamped _ng_run_id after untagged ones, without a manifest: refused, naming that line', async () => {
    const dir = tempDir();
    const out = join(dir, 'out.jsonl');
    writeFileSync(out, [JSON.stringify(input(0, 0)), JSON.stringify(input(1, 0)), JSON.stringify(result(2, 0, 0, 1.0))].join('\n') + '\n');
    const r = await runCli(['read', '-o', out], {});
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error: Run-tagged outcomes have lost their manifest. Restore it from backup or use a new output path. (${out}:3 is stamped _ng_run_id and no manifest is beside it.)`,
    );
  });
});
