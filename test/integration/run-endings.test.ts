/**
 * How a run ends after its rows are committed, and how an operator ends it early, through the real
 * `reverify` command on the shared Temporal dev server:
 * - `/aggregate_metrics` answers 422, or a 200 that is not JSON: the run ends within seconds with
 *   exit status 3, the outputs complete, the work directory gone, and one line whose command
 *   computes the metrics later (run here against the fixed server);
 * - `/aggregate_metrics` keeps answering 503: the aggregation gives up after a bounded number of
 *   attempts (the workflow with short retry intervals);
 * - `reverify cancel -o OUT` ends a run waiting on a verifier outage; the `reverify run` terminal
 *   says so and exits 4, `reverify status` shows it cancelled, and `--resume` finishes the job with
 *   no row lost or written twice.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { aggregateCommand } from '../../src/cli/aggregate-command.js';
import { buildRunSpec } from '../../src/cli/build-spec.js';
import { parseRunOptions } from '../../src/config/run-options.js';
import type { RunResult } from '../../src/contract/run-spec.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { cacheDir } from '../../src/temporal/connection.js';
import { createReverifyWorker } from '../../src/temporal/worker.js';
import { workflowBundlePath } from '../../src/temporal/workflow-bundle.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import type { reverifyRun } from '../../workflows/reverify-run.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { keysOf, readRows, runArgs, sampleRun } from '../helpers/run-fixtures.js';
import { byTask, judgeFailed, reward, startScriptedServer, type Reply, type Row } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { projectRoot, reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('run-endings');
const client = useTemporalClient(temporal);
const server = closedAfterEach(startScriptedServer);

interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `reverify` command (killed after `timeoutMs`, so a hanging run fails the test instead of blocking it). */
function cli(args: string[], timeoutMs = 90_000): Promise<CliOutcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [reverifyBin, ...args], {
      env: { ...process.env, ...temporal.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? -1 : -2), stdout, stderr });
    });
  });
}

/** Runs a command line as printed by `reverify` (`reverify …`, shell-quoted) through `sh`. */
function shell(commandLine: string): Promise<CliOutcome> {
  const line = commandLine.replace(/^reverify /, `'${process.execPath}' '${reverifyBin}' `);
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', line], {
      cwd: projectRoot,
      env: { ...process.env, ...temporal.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** A working `/aggregate_metrics` reply: the mean reward and the row count. */
function meanReward(body: { verify_responses: Row[] }): Reply {
  const rewards = body.verify_responses.map((r) => r.reward as number);
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  return {
    status: 200,
    body: { agent_metrics: { 'mean/reward': mean, rows: rewards.length }, key_metrics: { 'mean/reward': mean }, group_level_metrics: [] },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A run whose `/aggregate_metrics` answers `broken` until fixed: it must end within a minute with
 * exit 3 and one line naming the reason and a command that, run later against the fixed server,
 * writes `<stem>_aggregate_metrics.json` without touching the rows.
 */
async function aggregationFailsThenIsRedone(broken: Reply, reason: RegExp): Promise<void> {
  let fixed = false;
  const s = await server({
    // Task 3 judge-fails, so the sidecar has rows too.
    verify: byTask({ 3: judgeFailed() }, reward(1.0)),
    aggregate: (body) => (fixed ? meanReward(body) : broken),
  });
  const dir = tempDir();
  const d = await sampleRun(dir, s.port, { tasks: 10, repeats: 2 });
  const sidecar = join(dir, 'out_failures.jsonl');
  const metrics = join(dir, 'out_aggregate_metrics.json');
  const started = Date.now();
  const r = await cli([...runArgs(d), '--no-rejudge']);
  expect(Date.now() - started).toBeLessThan(60_000);
  expect(r.code).toBe(3);
  // The rows are all there, each once: the outputs are complete.
  expect(
    keysOf(readRows(d.output))
      .concat(keysOf(readRows(sidecar)))
      .sort(),
  ).toEqual(keysOf(readRows(d.inputsPath)).sort());
  expect(readRows(sidecar)).toHaveLength(2);
  expect(existsSync(metrics)).toBe(false);
  expect(existsSync(join(dir, '.out.jsonl.reverify'))).toBe(false);
  expect(r.stdout).toContain('Aggregate metrics: None');
  // One line: what happened, why, and the command that computes the metrics later.
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^Error: the rows are complete but the aggregate metrics could not be computed: /);
  expect(lines[0]).toMatch(reason);
  expect(lines[0]).toContain(`'${d.output}' and '${sidecar}' are complete`);
  const command = lines[0].split('compute the metrics later with: ')[1];
  expect(command).toBe(`reverify aggregate -i '${d.output}' -o '${d.output}' --no-merge --config '${d.config}'`);
  // The run gave up at once: a reply that retrying cannot fix is not retried.
  expect(s.aggregateBodies).toHaveLength(2); // one per agent
  const runBodies = s.aggregateBodies.map((b) => JSON.stringify(b));

  // Later, against the fixed server, the printed command computes the metrics and leaves the rows alone.
  fixed = true;
  const rows = readFileSync(d.output);
  const redo = await shell(command);
  expect([redo.code, redo.stderr]).toEqual([0, '']);
  expect(readFileSync(d.output).equals(rows)).toBe(true);
  const entries = JSON.parse(readFileSync(metrics, 'utf8')) as Array<{ agent_ref: { name: string }; key_metrics: Record<string, number> }>;
  expect(entries.map((e) => e.agent_ref.name).sort()).toEqual(['agent_a', 'agent_b']);
  expect(redo.stdout).toContain(`Aggregate metrics: ${metrics}`);
  // It sent the very rows the run would have sent.
  expect(
    s.aggregateBodies
      .slice(2)
      .map((b) => JSON.stringify(b))
      .sort(),
  ).toEqual([...runBodies].sort());
}

describe('aggregation that cannot succeed ends the run with the rows complete', () => {
  it('HTTP 422 from /aggregate_metrics: exit 3 within seconds, outputs complete, and the printed command computes the metrics later', async () => {
    await aggregationFailsThenIsRedone({ status: 422, body: { detail: 'verify_responses: field required' } }, /HTTP 422: .*field required/);
  });

  it('a 200 whose body is not JSON: the same', async () => {
    await aggregationFailsThenIsRedone({ status: 200, raw: '<html>proxy error</html>' }, /reply is not JSON/);
  });

  it('an /aggregate_metrics outage (503 on every try) ends after a bounded number of attempts, with the reason in the result', async () => {
    const s = await server({ aggregate: () => ({ status: 503, raw: '"upstream unavailable"' }) });
    const dir = tempDir();
    const d = await sampleRun(dir, s.port, { tasks: 6, repeats: 2 });
    const opts = parseRunOptions({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], maxAttempts: 1 });
    // Short retry intervals instead of the default ones (5 s doubling to 2 min, about 10 minutes in all).
    const spec = {
      ...(await buildRunSpec(opts, { heartbeatTimeoutMs: 10_000, maxAttempts: 1 })),
      aggregateRetry: { initialIntervalMs: 50, maximumIntervalMs: 200 },
    };
    const w = await createReverifyWorker({ address: temporal.address, namespace: temporal.namespace, cacheDir: cacheDir() });
    const handle = await client().workflow.start<typeof reverifyRun>('reverifyRun', {
      workflowId: `run-endings-503-${process.pid}-${Date.now()}`,
      taskQueue: temporal.taskQueue,
      args: [spec],
    });
    const result: RunResult = await w.worker.runUntil(handle.result());
    await w.close();
    expect(result.metricsPath).toBeNull();
    expect(result.aggregationError).toMatch(/POST \/aggregate_metrics failed: HTTP 503: upstream unavailable; gave up after 10 attempts/);
    expect(keysOf(readRows(d.output))).toHaveLength(12);
    expect(existsSync(join(dir, '.out.jsonl.reverify'))).toBe(false);
    // Both agents' requests are retried together within each attempt.
    expect(s.aggregateBodies.length).toBeGreaterThanOrEqual(10);
    expect(s.aggregateBodies.length).toBeLessThanOrEqual(20);
  });
});

describe("reverify aggregate --no-merge on a run's own output", () => {
  it('reads the output when it is all the glob matches, never rewriting it; matched with other shards it is an earlier merge and left out', async () => {
    const s = await server({});
    const dir = tempDir();
    const rows = (task: number) => `{"_ng_task_index":${task},"_ng_rollout_index":0,"reward":1.0,"agent_ref":{"name":"agent_a"}}\n`;
    writeFileSync(join(dir, 'a.jsonl'), rows(0));
    writeFileSync(join(dir, 'b.jsonl'), rows(1));
    const out = join(dir, 'out.jsonl');
    writeFileSync(out, rows(0) + rows(1));
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l) };
    const own = await aggregateCommand({ inputGlob: out, output: out, servers: [s.flag('rs')], merge: false }, io);
    expect(own.shards).toEqual([out]);
    expect(readFileSync(out, 'utf8')).toBe(rows(0) + rows(1));
    expect(own.metricsPath).toBe(join(dir, 'out_aggregate_metrics.json'));
    expect(s.aggregateBodies.map((b) => b.verify_responses.length)).toEqual([2]);
    const all = await aggregateCommand({ inputGlob: join(dir, '*.jsonl'), output: out, servers: [s.flag('rs')], merge: false }, io);
    expect(all.shards).toEqual([join(dir, 'a.jsonl'), join(dir, 'b.jsonl')]);
    expect(lines).toContain(`Excluded the output's own file(s) matched by --input-glob: ${out}`);
  });
});

describe('reverify cancel', () => {
  it('ends a run waiting on a verifier outage; the run terminal says so and exits 4; status shows it; --resume finishes with no row lost or duplicated', async () => {
    const first = await startReferenceServer({ port: 0, latencyMs: 20, seed: 1 });
    const port = first.port;
    const dir = tempDir();
    const d = await sampleRun(dir, port, { tasks: 40, repeats: 2 });
    const sidecar = join(dir, 'out_failures.jsonl');
    const args = ['run', '--inputs', d.inputsPath, '--rollouts', d.rolloutsPath, '-o', d.output, '--config', d.config];
    const opts = ['--concurrency', '2', '--batch-size', '10', '--heartbeat-timeout', '3', '--no-rejudge'];
    const running = cli([...args, ...opts]);
    let second: Awaited<ReturnType<typeof startReferenceServer>> | null = null;
    try {
      while (first.stats().requests.verify < 25) await sleep(50);
      await first.close(); // connection refused from now on: the run waits
      let status: CliOutcome = { code: -1, stdout: '', stderr: '' };
      for (let i = 0; i < 120 && !status.stdout.includes('Waiting: '); i++) {
        status = await cli(['status', '-o', d.output]);
        await sleep(500);
      }
      expect(status.stdout).toMatch(/: RUNNING/);
      expect(status.stdout).toContain('Waiting: verifyBatch attempt');

      const cancel = await cli(['cancel', '-o', d.output]);
      expect([cancel.code, cancel.stderr]).toEqual([0, '']);
      expect(cancel.stdout).toMatch(new RegExp(`^Cancelled the run writing '${d.output.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`, 'm'));
      expect(cancel.stdout).toContain('with --resume');

      const r = await running;
      expect(r.code).toBe(4);
      expect(r.stderr.trim().split('\n')).toEqual([
        `Cancelled: the run writing '${d.output}' was cancelled; the rows it committed are kept in its output and sidecar. To continue, run the same command with --resume.`,
      ]);
      const after = await cli(['status', '-o', d.output]);
      expect(after.code).toBe(0);
      expect(after.stdout).toMatch(/^Run reverify-out\.jsonl-[0-9a-f]+: CANCELLED/);
      expect(after.stdout).toContain('with --resume');
      // The history says what happened: after the cancel request, the batches' cancellations, the
      // outputs cut back to the last commit, the work directory removed, the run cancelled; and it replays.
      const history = await client().workflow.getHandle(workflowIdForOutput(d.output)).fetchHistory();
      const events = history.events ?? [];
      const requested = events.findIndex((e) => e.workflowExecutionCancelRequestedEventAttributes);
      expect(requested).toBeGreaterThan(0);
      const scheduledAfter = events.slice(requested).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
      expect(scheduledAfter).toEqual(['commitBatches', 'removeWorkDir']);
      expect(events.at(-1)?.workflowExecutionCanceledEventAttributes).toBeTruthy();
      await Worker.runReplayHistory({ workflowBundle: { codePath: await workflowBundlePath(cacheDir()) } }, history, 'cancelled');

      // The outputs end at the last recorded commit (whole lines), and the work directory is gone.
      expect(existsSync(join(dir, '.out.jsonl.reverify'))).toBe(false);
      const kept = readFileSync(d.output, 'utf8');
      const keptSidecar = readFileSync(sidecar, 'utf8');
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.endsWith('\n')).toBe(true);
      expect(readRows(d.output).length).toBeLessThan(80);

      second = await startReferenceServer({ port, latencyMs: 1, seed: 1 });
      const resumed = await cli([...args, ...opts, '--resume']);
      expect([resumed.code, resumed.stderr]).toEqual([0, '']);
      expect(readFileSync(d.output, 'utf8').startsWith(kept)).toBe(true);
      expect(readFileSync(sidecar, 'utf8').startsWith(keptSidecar)).toBe(true);
      const keys = keysOf(readRows(d.output)).concat(keysOf(readRows(sidecar)));
      expect(keys).toHaveLength(80);
      expect(new Set(keys)).toEqual(new Set(keysOf(readRows(d.inputsPath))));
    } finally {
      await first.close().catch(() => undefined);
      await second?.close();
    }
  });

  it('ends a run retrying a failing /aggregate_metrics; every terminal following it (one attached) exits 4; --resume then only aggregates', async () => {
    let fixed = false;
    const s = await server({ aggregate: (body) => (fixed ? meanReward(body) : { status: 503, raw: '"overloaded"' }) });
    const dir = tempDir();
    const d = await sampleRun(dir, s.port, { tasks: 6, repeats: 2 });
    const args = ['run', '--inputs', d.inputsPath, '--rollouts', d.rolloutsPath, '-o', d.output, '--config', d.config, '--no-rejudge'];
    let attachedOutput = '';
    const first = cli(args);
    while (s.aggregateBodies.length === 0) await sleep(100);
    const attached = cli(args);
    let status: CliOutcome = { code: -1, stdout: '', stderr: '' };
    for (let i = 0; i < 120 && !status.stdout.includes('Waiting: aggregateRun attempt'); i++) {
      status = await cli(['status', '-o', d.output]);
      await sleep(500);
    }
    expect(status.stdout).toContain('Waiting: aggregateRun attempt');
    const rows = readFileSync(d.output);
    const cancel = await cli(['cancel', '-o', d.output, '--no-worker']);
    expect([cancel.code, cancel.stderr]).toEqual([0, '']);
    const [a, b] = await Promise.all([first, attached]);
    attachedOutput = b.stdout;
    expect(attachedOutput).toContain('Attached to the live run');
    for (const r of [a, b]) {
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(
        /^Cancelled: the run writing '.*out\.jsonl' was cancelled; .* To continue, run the same command with --resume\.$/m,
      );
    }
    expect(readFileSync(d.output).equals(rows)).toBe(true);
    expect(existsSync(join(dir, '.out.jsonl.reverify'))).toBe(false);

    fixed = true;
    const verified = s.verifyBodies.length;
    const resumed = await cli([...args, '--resume']);
    expect([resumed.code, resumed.stderr]).toEqual([0, '']);
    expect(s.verifyBodies.length).toBe(verified);
    expect(readFileSync(d.output).equals(rows)).toBe(true);
    expect(resumed.stdout).toContain(`Aggregate metrics: ${join(dir, 'out_aggregate_metrics.json')}`);
  });

  it('with no live run for the output: one line, exit 1', async () => {
    const out = join(tempDir(), 'nothing.jsonl');
    const r = await cli(['cancel', '-o', out]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^Error: no live run writes '.*nothing\\.jsonl'`))]);
  });
});
