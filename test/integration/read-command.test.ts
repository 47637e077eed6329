/**
 * Issue 9 item 7: `reverify read` prints a run's selected outcomes as JSONL, writes and locks
 * nothing, and says whether a plain JSONL reader may read the files unfiltered. On a real run
 * whose re-judgment rounds left failures superseded by later successes, through the real command.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { keysOf, readRows, runInProcess, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('read-command');
const rs = useReferenceServer({ judgeFailRate: 0.4, seed: 11 });

function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'base64')]));
}

const lines = (text: string) => text.split('\n').filter((l) => l !== '');

describe('reverify read', () => {
  it('after re-judgment rounds: success = main rows, failure = rollouts never scored, raw false; nothing written', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 10, repeats: 2 });
    const run = await runInProcess({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      maxAttempts: 2,
      rejudgeDelayMs: 50,
    });
    expect(run.result).not.toBeNull();
    const main = readRows(d.output);
    const side = readRows(join(dir, 'out_failures.jsonl'));
    const scored = new Set(keysOf(main));
    const neverScored = [...new Set(keysOf(side))].filter((k) => !scored.has(k));
    expect(keysOf(side).some((k) => scored.has(k))).toBe(true); // a failure superseded by a later success
    const before = snapshot(dir);

    const success = await runCli(['read', '-o', d.output, '--disposition', 'success'], {});
    expect(success.code).toBe(0);
    expect(lines(success.stdout)).toEqual(lines(readFileSync(d.output, 'utf8')));
    expect(success.stderr).toMatch(
      /^Selected outcomes of .*out\.jsonl: \d+ success, \d+ failure, 0 omitted, 0 unknown\. raw_outcomes_are_selected: false: \d+ superseded row\(s\)/,
    );

    const failure = await runCli(['read', '-o', d.output, '--disposition', 'failure', '--json'], {});
    expect(failure.code).toBe(0);
    const failed = lines(failure.stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(keysOf(failed).sort()).toEqual(neverScored.sort());
    const summary = JSON.parse(failure.stderr) as {
      counts: Record<string, number>;
      superseded: number;
      raw_outcomes_are_selected: boolean;
    };
    expect(summary.counts).toEqual({ success: main.length, failure: neverScored.length, omitted: 0, unknown: 0 });
    expect(summary.superseded).toBe(main.length + side.length - main.length - neverScored.length);
    expect(summary.raw_outcomes_are_selected).toBe(false);

    expect(snapshot(dir)).toEqual(before); // no lock file, nothing written
  });

  it('an omission is read as omitted, not failed; --disposition checked; a manifest reverify cannot read: one line', async () => {
    const dir = tempDir();
    const out = join(dir, 'out.jsonl');
    writeFileSync(out, '{"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0}\n');
    const omission =
      '{"_ng_task_index": 1, "_ng_rollout_index": 0, "_ng_failure_class": "skipped", "_ng_failure_terminal": true, "_ng_omitted": true, "_ng_failure_message": "no image"}';
    writeFileSync(join(dir, 'out_failures.jsonl'), omission + '\n');
    const omitted = await runCli(['read', '-o', out, '--disposition', 'omitted'], {});
    expect(omitted.code).toBe(0);
    expect(omitted.stdout).toBe(omission + '\n');
    expect(omitted.stderr).toMatch(
      /1 success, 0 failure, 1 omitted, 0 unknown\. raw_outcomes_are_selected: true: a plain JSONL reader may read/,
    );

    const bad = await runCli(['read', '-o', out, '--disposition', 'failed'], {});
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe("Error: --disposition must be one of success, failure, omitted, unknown, got 'failed'");

    // No sidecar: only the files that exist are named. A cut-off last line: a plain reader would fail on it.
    const alone = join(tempDir(), 'alone.jsonl');
    writeFileSync(alone, '{"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0}\n');
    const whole = await runCli(['read', '-o', alone], {});
    expect(whole.stderr.trim()).toBe(
      `Selected outcomes of ${alone}: 1 success, 0 failure, 0 omitted, 0 unknown. raw_outcomes_are_selected: true: a plain JSONL reader may read ${alone} unfiltered.`,
    );
    writeFileSync(alone, '{"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0}\n{"_ng_task_index": 1, "_ng_rol');
    const cut = await runCli(['read', '-o', alone], {});
    expect(cut.code).toBe(0);
    expect(lines(cut.stdout)).toHaveLength(1);
    expect(cut.stderr.trim()).toBe(
      `Selected outcomes of ${alone}: 1 success, 0 failure, 0 omitted, 0 unknown. raw_outcomes_are_selected: false: the last line of ${alone} is cut off (an interrupted write; \`reverify run --resume\` repairs it); read the selected outcomes with \`reverify read\`, not the raw files.`,
    );
    const folder = await runCli(['read', '-o', dir], {});
    expect(folder.code).toBe(1);
    expect(folder.stderr.trim()).toBe(`Error: --output '${dir}' is a directory: pass the --output file of a run`);

    // Managed runs are read (read-managed.test.ts); a manifest without its run id is not one.
    writeFileSync(join(dir, 'out_manifest.json'), '{"schema_version": 2}\n');
    const managed = await runCli(['read', '-o', out], {});
    expect(managed.code).toBe(1);
    expect(managed.stdout).toBe('');
    expect(managed.stderr.trim()).toBe(
      `Error: ${join(dir, 'out_manifest.json')}: run_id missing; this is not a run manifest reverify can read (schema_version 2, selection_policy latest_allocated): restore it from backup, or read the run with NeMo Gym's RolloutStore.read`,
    );
  });
});
