/**
 * Issue 9 items 5 and 6: a run another process writes (a NeMo Gym collector holding
 * `<stem>_run.lock`), and runs of newer NeMo Gym's run store (a manifest or an attempts journal
 * beside the results), are refused before anything is written: one line, exit 1, every file
 * byte-identical, no workflow. The collector is stood in for by a Python process taking the lock
 * with `fcntl.flock`, as NeMo Gym does; the managed-run fixtures follow the seed's file rules.
 * Issue 31 item 4: the `reverify run` that drives a run holds the lock for the whole run, with its
 * in-process worker or with `reverify worker` processes (which write under its driver lease).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTaggedWithoutManifest } from '../../src/contract/managed-run.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { holdLockElsewhere, lockFreeElsewhere } from '../helpers/foreign-lock.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runCli, runShell } from '../helpers/cli-process.js';
import { RUN_ID, writeManagedRun } from '../helpers/managed-run.js';
import { captureIo, keysOf, readRows, runArgs, runReverify, sampleRun } from '../helpers/run-fixtures.js';
import { reward, startScriptedServer, type Reply } from '../helpers/scripted-server.js';
import { tasks, writeFixture } from '../helpers/spec-fixtures.js';
import { reverifyBin, sigkill, startWorkerProcess } from '../helpers/worker-process.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { runCommand } from '../../src/cli/run-command.js';
import { tempDir, useSharedTemporal, useTemporalClient, runExists } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('run-lock');
const client = useTemporalClient(temporal);
const reference = closedAfterEach(startReferenceServer);
const scripted = closedAfterEach(startScriptedServer);

/** Every file of a directory with its bytes. */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'base64')]));
}

const workflowExists = (output: string) => runExists(client(), output);

/** A run manifest as newer `gym eval run` writes it (schema 2, latest_allocated selection). */
function writeManifest(path: string): void {
  const manifest = {
    schema_version: 2,
    selection_policy: 'latest_allocated',
    next_attempt: { '0:0': 2 },
    run_id: '5f0c3b0e8d6a4c6f9a1e2b3c4d5e6f70',
    source_digest: 'a'.repeat(64),
    materialized_digest: 'b'.repeat(64),
    config_digest: 'c'.repeat(64),
    legacy_import: false,
    identity_overridden: false,
  };
  writeFileSync(path, JSON.stringify(manifest, null, 2) + '\n');
}

describe('run lock (item 5)', () => {
  it('a collector holding <stem>_run.lock: one line, exit 1, nothing written, no workflow; free again, the run goes', async () => {
    const rs = await reference({});
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 2, repeats: 1 });
    writeFileSync(d.output, '{"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0}\n');
    const lock = join(dir, 'out_run.lock');
    const holder = await holdLockElsewhere(lock);
    const before = snapshot(dir);
    try {
      const run = await runCli([...runArgs(d), '--overwrite'], temporal.env);
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(`Error: Another collector owns this run (${lock}). Wait for it to stop before resuming.`);
      expect(run.stdout).toBe('');
      expect(snapshot(dir)).toEqual(before);
      expect(await workflowExists(d.output)).toBe(false);
    } finally {
      await holder.release();
    }
    const run = await runReverify({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      overwrite: true,
    });
    expect(run.error).toBeNull();
    expect(lockFreeElsewhere(lock)).toBe(true);
  });
});

describe('run lock held for the whole run (issue 31 item 4)', () => {
  /** A run of `gated + 4` tasks whose tasks from `gated` on wait at a gate: the rows before them are committed, then the run idles. */
  async function gatedRun(gated: number) {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const s = await scripted({
      verify: async (row): Promise<Reply> => {
        if ((row._ng_task_index as number) >= gated) await gate;
        return reward(1.0);
      },
    });
    const f = writeFixture(tempDir(), { inputs: tasks([...Array(gated + 4).keys()]) });
    const opts = { inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [s.flag('rs')], batchSize: 2, concurrency: 4 };
    return { f, opts, release, lock: join(f.dir, 'out_run.lock') };
  }
  const committed = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("a collector's fcntl.flock is refused all through a live run, between commits too; after the run it succeeds", async () => {
    const g = await gatedRun(2);
    const running = runReverify({ ...g.opts, maxAttempts: 1 });
    // Tasks 0-1 committed, the others waiting at the gate: no step writes now, the run is between commits.
    while (committed(g.f.output) < 2) await sleep(20);
    expect(lockFreeElsewhere(g.lock)).toBe(false);
    g.release();
    const run = await running;
    expect(run.error).toBeNull();
    expect(committed(g.f.output)).toBe(6);
    expect(lockFreeElsewhere(g.lock)).toBe(true);
  });

  it("--no-worker: the run's steps on a `reverify worker` process write under the driver's hold; a collector is refused meanwhile", async () => {
    const g = await gatedRun(2);
    const worker = await startWorkerProcess(temporal.env);
    try {
      const io = captureIo();
      const running = runCommand({ ...g.opts, maxAttempts: 1 }, { worker: false, heartbeatTimeoutMs: 10_000 }, io);
      while (committed(g.f.output) < 2) await sleep(20);
      expect(lockFreeElsewhere(g.lock)).toBe(false);
      g.release();
      const result = await running;
      expect(result.done).toBe(6);
      expect(committed(g.f.output)).toBe(6);
      expect(lockFreeElsewhere(g.lock)).toBe(true);
    } finally {
      await sigkill(worker);
    }
  });

  it("the driver Ctrl-C'd (--no-worker): its hold goes with it; the run goes on on its worker, which takes the lock per step", async () => {
    const g = await gatedRun(2);
    const worker = await startWorkerProcess(temporal.env);
    const args = ['run', '--inputs', g.f.inputs, '--rollouts', g.f.rollouts, '-o', g.f.output, '--server', g.opts.servers[0]];
    const driver = spawn(process.execPath, [reverifyBin, ...args, '--no-worker', '--batch-size', '2', '--max-attempts', '1'], {
      env: { ...process.env, ...temporal.env },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((r) => driver.once('exit', (code) => r(code)));
    try {
      while (committed(g.f.output) < 2) await sleep(20);
      expect(lockFreeElsewhere(g.lock)).toBe(false);
      driver.kill('SIGINT');
      expect(await exited).toBe(130);
      // Between two steps, with no driver: free (a collector could take the run now).
      expect(lockFreeElsewhere(g.lock)).toBe(true);
      g.release();
      while (committed(g.f.output) < 6) await sleep(20);
      await client().workflow.getHandle(workflowIdForOutput(g.f.output)).result();
      expect(lockFreeElsewhere(g.lock)).toBe(true);
    } finally {
      await sigkill(worker);
    }
  });
});

describe('managed runs (item 6)', () => {
  it('--rollouts with a manifest beside it: refused, every file unchanged', async () => {
    const rs = await reference({});
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 2, repeats: 1 });
    const manifest = d.rolloutsPath.replace(/\.jsonl$/, '_manifest.json');
    writeManifest(manifest);
    const before = snapshot(dir);
    const run = await runCli(runArgs(d), temporal.env);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(
      `--rollouts belongs to a NeMo Gym managed run (${manifest}). Journal-backed reverification is a follow-up`,
    );
    expect(run.stderr).toContain('Saved artifacts were not changed.');
    expect(snapshot(dir)).toEqual(before);
    expect(await workflowExists(d.output)).toBe(false);
  });

  it('--overwrite of an output backed by a manifest never deletes it', async () => {
    const rs = await reference({});
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 2, repeats: 1 });
    writeFileSync(d.output, '{"_ng_task_index": 0, "_ng_rollout_index": 0, "_ng_attempt_index": 1, "reward": 1.0}\n');
    writeFileSync(join(dir, 'out_failures.jsonl'), '');
    writeManifest(join(dir, 'out_manifest.json'));
    const before = snapshot(dir);
    const run = await runReverify({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      overwrite: true,
    });
    expect(run.error?.code).toBe(1);
    expect(run.error?.line).toMatch(/^Error: Cannot overwrite a journal-backed run with reverification; choose a new output path\./);
    expect(snapshot(dir)).toEqual(before);
  });

  it('--resume of an output with an attempts journal beside it: refused, unchanged', async () => {
    const rs = await reference({});
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 2, repeats: 1 });
    writeFileSync(d.output, '');
    writeFileSync(join(dir, 'out_attempts.jsonl'), '{"identity": "0:0", "attempt": 0}\n');
    const before = snapshot(dir);
    const run = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], resume: true });
    expect(run.error?.code).toBe(1);
    expect(run.error?.line).toContain(`--output belongs to a NeMo Gym managed run (${join(dir, 'out_attempts.jsonl')})`);
    expect(snapshot(dir)).toEqual(before);
  });
  it('the projection the refusal names (reverify read … --skip-keys _ng_run_id) runs, and only selected attempts are verified', async () => {
    const rs = await reference({});
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 3, repeats: 1 });
    // The sample rollouts as a managed run's results: the first one retried (attempt 0 failed, attempt 1 scored).
    const rollouts = readRows(d.rolloutsPath);
    const ids = rollouts.map((r) => `${r._ng_task_index as number}-${r._ng_rollout_index as number}`);
    const tag = (row: Record<string, unknown>, attempt: number) => ({ ...row, _ng_run_id: RUN_ID, _ng_attempt_index: attempt });
    const gym = join(dir, 'gym');
    mkdirSync(gym);
    writeManagedRun({
      dir: gym,
      materialized: rollouts.map((r) => ({ _ng_task_index: r._ng_task_index, _ng_rollout_index: r._ng_rollout_index })),
      next_attempt: Object.fromEntries(ids.map((id, i) => [id, i === 0 ? 2 : 1])),
      outcomes: [
        { file: 'failures', row: { ...tag(rollouts[0], 0), _ng_failure_class: 'transient' } },
        ...rollouts.slice(1).map((r) => ({ file: 'results' as const, row: tag(r, 0) })),
        { file: 'results', row: tag(rollouts[0], 1) },
      ],
    });
    const refused = await runCli([...runArgs({ ...d, rolloutsPath: join(gym, 'out.jsonl') })], temporal.env);
    expect(refused.code).toBe(1);
    const hint = /\(Make the projection with `(reverify read .*)` and pass it as --rollouts\.\)/.exec(refused.stderr);
    expect(hint).not.toBeNull();
    const projection = join(dir, 'selected.jsonl');
    const made = await runShell(hint![1].replace('selected.jsonl', projection), temporal.env);
    expect(made.stderr).toContain('raw_outcomes_are_selected: false: 1 superseded row(s)');
    expect(made.code).toBe(0);
    const run = await runReverify({ inputs: d.inputsPath, rollouts: projection, output: d.output, configs: [d.config] });
    expect(run.error).toBeNull();
    const out = readRows(d.output);
    expect(keysOf(out).sort()).toEqual(['0:0', '1:0', '2:0']);
    expect(out.every((r) => !('_ng_run_id' in r))).toBe(true);
    const selected = readRows(projection);
    expect(selected).toHaveLength(3);
    expect(selected.every((r) => !('_ng_run_id' in r) && !('_ng_failure_class' in r))).toBe(true);
    expect(selected.find((r) => r._ng_task_index === rollouts[0]._ng_task_index)?._ng_attempt_index).toBe(1); // the selected attempt
  });

  it('an output whose rows carry _ng_run_id but no manifest (it was lost): refused by run and read, unchanged', async () => {
    const rs = await reference({});
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 2, repeats: 1 });
    writeFileSync(
      d.output,
      '{"_ng_task_index": 0, "_ng_rollout_index": 0, "_ng_run_id": "run-1", "_ng_attempt_index": 0, "reward": 1.0}\n',
    );
    const before = snapshot(dir);
    const run = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], resume: true });
    expect(run.error).toEqual({ code: 1, line: `Error: ${runTaggedWithoutManifest(d.output, 1)}` });
    const read = await runCli(['read', '-o', d.output], temporal.env);
    expect(read.code).toBe(1);
    expect(read.stdout).toBe('');
    expect(read.stderr).toContain('Run-tagged outcomes have lost their manifest. Restore it from backup or use a new output path.');
    expect(snapshot(dir)).toEqual(before);
    expect(await workflowExists(d.output)).toBe(false);
  });
});
