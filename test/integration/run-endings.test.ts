/**
 * How a run ends after its rows are committed, and how an operator ends it early, through the real
 * `reverify` command on the shared Temporal dev server:
 * - `/aggregate_metrics` answers 422, or a 200 that is not JSON: the run ends within seconds with
 *   exit status 2, the outputs complete, the work directory gone, a line saying what the server
 *   answered and a line whose command computes the metrics later (run here against the fixed
 *   server); outages of `/aggregate_metrics` are in aggregation-outages.test.ts;
 * - `reverify cancel -o OUT` ends a run waiting on a verifier outage; the `reverify run` terminal
 *   says so and exits 4, `reverify status` shows it cancelled, and `--resume` finishes the job with
 *   no row lost or written twice.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { aggregateCommand } from '../../src/cli/aggregate-command.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { cacheDir } from '../../src/temporal/connection.js';
import { workflowBundlePath } from '../../src/temporal/workflow-bundle.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { keysOf, readRows, runArgs, sampleRun } from '../helpers/run-fixtures.js';
import { byTask, judgeFailed, reward, startScriptedServer, type Reply, type Row } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { runCli, runShell, type CliOutcome } from '../helpers/cli-process.js';
import { escapeRegExp } from '../helpers/regexp.js';

const temporal = useSharedTemporal('run-endings');
const client = useTemporalClient(temporal);
const server = closedAfterEach(startScriptedServer);

/** Runs the real `reverify` command. */
const cli = (args: string[], timeoutMs?: number) => runCli(args, temporal.env, timeoutMs);
/** Runs a command line as printed by `reverify` through `sh`. */
const shell = (commandLine: string) => runShell(commandLine, temporal.env);

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
 * exit 2, a line naming the reason and a line with a command that, run later against the fixed
 * server, writes `<stem>_aggregate_metrics.json` without touching the rows.
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
  const r = await cli([...runArgs(d), '--no-rejudge']);
  expect(r.code).toBe(2);
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
  // Two lines: what happened and what the server answered; the command that computes the metrics later.
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/^Error: the rows are complete but the aggregate metrics could not be computed: /);
  expect(lines[0]).toMatch(reason);
  expect(lines[0]).toContain(`'${d.output}' and '${sidecar}' are complete.`);
  expect(lines[1]).toMatch(/^Compute the metrics later \(once the server is fixed\) with: reverify aggregate /);
  const command = lines[1].split(' with: ')[1];
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
  it('HTTP 422 from /aggregate_metrics: exit 2 within seconds, outputs complete, and the printed command computes the metrics later', async () => {
    await aggregationFailsThenIsRedone({ status: 422, body: { detail: 'verify_responses: field required' } }, /HTTP 422: .*field required/);
  });

  it('a 200 whose body is not JSON: the same', async () => {
    await aggregationFailsThenIsRedone({ status: 200, raw: '<html>proxy error</html>' }, /reply is not JSON/);
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
    const all = await aggregateCommand(
      { inputGlob: join(dir, '*.jsonl'), output: out, servers: [s.flag('rs')], merge: false, overwrite: true },
      io,
    );
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
      expect(cancel.stdout).toMatch(new RegExp(`^Cancelled the run writing '${escapeRegExp(d.output)}'`, 'm'));
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
      // outputs cut back to the last commit, the work directory removed, the coverage file written, the
      // run cancelled; and it replays.
      const history = await client().workflow.getHandle(workflowIdForOutput(d.output)).fetchHistory();
      const events = history.events ?? [];
      const requested = events.findIndex((e) => e.workflowExecutionCancelRequestedEventAttributes);
      expect(requested).toBeGreaterThan(0);
      const scheduledAfter = events.slice(requested).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
      // The rows the batch in flight finished before the outage are committed (when there are any),
      // then the cut-back, the rollouts never started recorded, the cleanup and the coverage file.
      expect(scheduledAfter.slice(-4)).toEqual(['commitBatches', 'recordUnstartedRows', 'removeWorkDir', 'writeCoverage']);
      expect(new Set(scheduledAfter.slice(0, -4))).toEqual(new Set(scheduledAfter.length > 4 ? ['commitBatches'] : []));
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

  it('of a healthy run: the batches in flight hand back what they finished, every verdict paid for is committed, --resume sends each row once', async () => {
    const ref = await startReferenceServer({ port: 0, latencyMs: 300, seed: 1 });
    try {
      const dir = tempDir();
      const d = await sampleRun(dir, ref.port, { tasks: 50, repeats: 2 });
      const sidecar = join(dir, 'out_failures.jsonl');
      const args = ['run', '--inputs', d.inputsPath, '--rollouts', d.rolloutsPath, '-o', d.output, '--config', d.config];
      const opts = ['--concurrency', '4', '--batch-size', '10', '--no-rejudge'];
      const running = cli([...args, ...opts]);
      while (ref.stats().requests.verify < 6) await sleep(20);
      const cancel = await cli(['cancel', '-o', d.output]);
      expect([cancel.code, cancel.stderr]).toEqual([0, '']);
      expect(cancel.stdout).toContain('what they finished is committed');
      expect((await running).code).toBe(4);
      // Every /verify the server answered (each within 300 ms, well inside the grace) is in the files.
      const sent = ref.stats().requests.verify;
      const kept = readRows(d.output).length + (existsSync(sidecar) ? readRows(sidecar).length : 0);
      expect(sent).toBeLessThan(100);
      expect(kept).toBe(sent);
      const resumed = await cli([...args, ...opts, '--resume']);
      expect([resumed.code, resumed.stderr]).toEqual([0, '']);
      expect(ref.stats().requests.verify).toBe(100);
      const keys = keysOf(readRows(d.output)).concat(existsSync(sidecar) ? keysOf(readRows(sidecar)) : []);
      expect(keys.sort()).toEqual(keysOf(readRows(d.inputsPath)).sort());
    } finally {
      await ref.close();
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
