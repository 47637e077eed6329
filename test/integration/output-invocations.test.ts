/**
 * The output is the unit a user thinks in (issue 29 items 5, 6, 9): one output written by three
 * invocations of `reverify run` — a run stopped with Ctrl-C and attached again, a `--resume` that is
 * cancelled, a `--resume` that finishes — through the real CLI, the shared dev server and the
 * reference server. `list` shows each invocation with its own state; `status` the output's count
 * (from its files) beside the last invocation's own; `report` every invocation's batches, its
 * throughput over active time, the missing keys listed; the history shows the Ctrl-C as a stop,
 * not as failed attempts, and names every activity and timer.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { ListedRun } from '../../src/cli/list-command.js';
import type { RunReport } from '../../src/cli/run-report.js';
import type { BatchResult } from '../../src/contract/run-spec.js';
import type { ReportData } from '../../src/report/report-data.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { decode } from '../../src/cli/history-events.js';
import { FailureType } from '../../src/contract/failure-types.js';
import { temporal as proto } from '@temporalio/proto';
import { runCli } from '../helpers/cli-process.js';
import { readRows, runArgs, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('invocations');
const LATENCY_MS = 40;
const rs = useReferenceServer({ port: 0, latencyMs: LATENCY_MS, judgeFailRate: 0.1, seed: 11 });
const client = useTemporalClient(temporal);

/** `reverify …` as a child process whose output is collected as it comes. */
function start(args: string[]) {
  const child = spawn(process.execPath, [reverifyBin, ...args], {
    env: { ...process.env, ...temporal.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  const exited = new Promise<number>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : -2))));
  return { child, out: () => text, exited };
}

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CONCURRENCY = 4;

describe('an output written by several invocations', () => {
  it('list, status and report describe each invocation and the output across them', { timeout: 300_000 }, async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 100, repeats: 4 });
    const rows = 400;
    const args = [...runArgs(d), '--concurrency', String(CONCURRENCY), '--batch-size', '25', '--max-attempts', '3', '--no-rejudge'];
    const workflowId = workflowIdForOutput(d.output);

    // Invocation 1: Ctrl-C a third of the way, a pause (no worker: nothing runs), then attached again.
    const first = start(args);
    await until('a third of the rows', () => rs().stats().requests.verify >= rows / 3);
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(130);
    const stoppedAt = Date.now();
    await new Promise((r) => setTimeout(r, 2000));
    const pauseMs = Date.now() - stoppedAt;
    const attached = await runCli(args, temporal.env, 40_000);
    if (attached.code !== 0 && attached.code !== 3) {
      console.log((await runCli(['history', '-o', d.output], temporal.env)).stdout);
      const desc = await client().workflow.getHandle(workflowId).describe();
      console.log(JSON.stringify(desc.raw.pendingActivities, null, 1).slice(0, 5000));
      const evs = (await client().workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      for (const e of evs.filter((x) => x.workflowTaskFailedEventAttributes))
        console.log(JSON.stringify(e.workflowTaskFailedEventAttributes?.failure).slice(0, 3000));
    }
    expect(attached.stdout).toContain('Attached to the live run');
    expect([0, 3], attached.stdout + attached.stderr).toContain(attached.code);
    const firstRunId = (await client().workflow.getHandle(workflowId).describe()).runId;

    // The Ctrl-C in the history: batches held with what they answered, no failed attempt, nothing "lost".
    const events = (await client().workflow.getHandle(workflowId, firstRunId).fetchHistory()).events ?? [];
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes);
    const stopped = events.filter((e) => {
      const r = e.activityTaskCompletedEventAttributes && (decode(e.activityTaskCompletedEventAttributes.result) as BatchResult | null);
      return r && typeof r === 'object' && r.held === true && r.stopped === true;
    });
    expect(stopped.length).toBeGreaterThan(0);
    // No attempt failed. A loan that finds no row left to lend to moves to the next worker
    // (LoanMoves): `reverify history` says so, not a failure.
    const failureType = (e: (typeof events)[number]) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type;
    expect(events.filter((e) => e.activityTaskFailedEventAttributes && failureType(e) !== FailureType.LoanMoves)).toEqual([]);
    // No attempt was started again, but for one the stopping worker never got: the SDK cuts its
    // polls at shutdown, and a task the server had just handed to one waits out its heartbeat
    // timeout (docs/operating.md). Every task the worker did get has ended: it exited 130, which it
    // does only once its activities have. Named by activity and summary.
    const scheduledOf = (id: unknown) => scheduled.find((x) => String(x.eventId) === String(id));
    const retried = events
      .map((e) => e.activityTaskStartedEventAttributes)
      .filter(
        (a) =>
          (a?.attempt ?? 1) > 1 &&
          a?.lastFailure?.timeoutFailureInfo?.timeoutType !== proto.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
      )
      .map((a) => scheduledOf(a?.scheduledEventId))
      .map(
        (s) =>
          `${s?.activityTaskScheduledEventAttributes?.activityType?.name}: ${s?.userMetadata?.summary ? String(decode({ payloads: [s.userMetadata.summary] })) : ''}`,
      );
    expect(retried).toEqual([]);
    // Every activity and timer has a summary (the UI's timeline names it).
    for (const e of [...scheduled, ...events.filter((x) => x.timerStartedEventAttributes)])
      expect(e.userMetadata?.summary, e.activityTaskScheduledEventAttributes?.activityType?.name ?? 'timer').toBeTruthy();
    const history = await runCli(['history', '-o', d.output], temporal.env);
    expect(history.stdout).toContain('stopped with its worker');
    expect(history.stdout).not.toMatch(/FAILED/);
    // `lost` only for a task the stopping worker never got (above): its batch's retry audits it.
    const neverGot = events.filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1).length;
    expect((history.stdout.match(/\blost\b/g) ?? []).length).toBeLessThanOrEqual(neverGot);

    // Invocation 2: --resume with no worker, cancelled before it did anything.
    const waiting = start([...args, '--resume', '--no-worker']);
    await until('the second invocation', async () => {
      const desc = await client().workflow.getHandle(workflowId).describe();
      return desc.runId !== firstRunId && desc.status.name === 'RUNNING';
    });
    const cancelled = await runCli(['cancel', '-o', d.output], temporal.env, 120_000);
    expect(cancelled.code, cancelled.stdout + cancelled.stderr).toBe(0);
    expect(await waiting.exited).toBe(4);

    // Invocation 3: --resume runs what is still missing.
    const resumed = await runCli([...args, '--resume'], temporal.env, 120_000);
    expect([0, 3], resumed.stdout + resumed.stderr).toContain(resumed.code);
    const main = readRows(d.output);
    const sidecar = readRows(d.output.replace(/\.jsonl$/, '_failures.jsonl'));
    const scored = new Set(main.map((r) => `${r._ng_task_index}:${r._ng_rollout_index}`)).size;
    expect(scored).toBe(main.length);
    // The server was asked for every key; its answers are the files' rows, and at most the rows in flight at the Ctrl-C twice.
    const stats = rs().stats();
    expect(stats.requests.verify - stats.verify_repeats).toBe(rows);
    expect(stats.requests.verify).toBeLessThanOrEqual(main.length + sidecar.length + 2 * CONCURRENCY);
    expect(resumed.stdout).toContain(`Scored: ${scored}/${rows} rollouts of the output`);

    // list: each invocation with its own state, newest first.
    const listed = await runCli(['list', '--json'], temporal.env);
    const mine = (JSON.parse(listed.stdout) as ListedRun[]).filter((r) => r.workflowId === workflowId);
    expect(mine.map((r) => r.state)).toEqual(['COMPLETED', 'CANCELLED', 'COMPLETED']);
    expect(new Set(mine.map((r) => r.runId)).size).toBe(3);
    console.log(['reverify list:', (await runCli(['list'], temporal.env)).stdout].join('\n'));

    // status: the output across every invocation, with the last one's own figures.
    const status = await runCli(['status', '-o', d.output], temporal.env);
    const planned = (JSON.parse((await runCli(['status', '-o', d.output, '--json'], temporal.env)).stdout) as RunReport).result!.rollouts;
    expect(status.stdout).toContain(
      `Scored: ${scored}/${rows} rollouts of the output${scored < rows ? `, ${rows - scored} not` : ''} (3 invocations wrote it); ` +
        `this invocation: ${planned.planned} rollouts planned, ${planned.scored} scored`,
    );
    expect(planned.planned).toBeLessThan(rows);
    console.log(status.stdout);

    // history: every invocation, the Ctrl-C of the first among them.
    const audit = await runCli(['history', '-o', d.output], temporal.env);
    expect(audit.stdout).toContain('stopped with its worker');
    expect(audit.stdout.match(/run started again: a new invocation/g)).toHaveLength(2);
    expect(audit.stdout).not.toMatch(/\blost\b|FAILED/);

    // report: every invocation's batches; throughput over each one's own active time; missing keys listed.
    const report = await runCli(['report', '-o', d.output, '--json'], temporal.env);
    expect(report.code, report.stderr).toBe(0);
    const data = JSON.parse(report.stdout) as ReportData;
    const tl = data.timeline!;
    expect(tl.rounds.reduce((s, r) => s + r.rows, 0)).toBe(main.length + sidecar.length);
    expect(tl.progress[tl.progress.length - 1].rows).toBe(main.length + sidecar.length);
    expect(tl.invocations.map((v) => v.invocation)).toEqual([1, 3]);
    // No batch ran during the pause; no lane answers faster than the server's latency.
    for (const v of tl.invocations) expect(v.rowsPerSecond!).toBeLessThanOrEqual((CONCURRENCY * 1000) / LATENCY_MS);
    const firstWall = (Date.parse(tl.invocations[1].started) - Date.parse(tl.invocations[0].started)) / 1000;
    expect(tl.invocations[0].activeSeconds).toBeLessThanOrEqual(firstWall - pauseMs / 1000);
    expect(data.totals.oldOnly).toBe(rows - scored);
    expect(data.totals.missingKeys).toHaveLength(Math.min(100, rows - scored));
    const text = await runCli(['report', '-o', d.output], temporal.env);
    if (scored < rows)
      expect(text.stdout).toContain(`Missing from the main output: ${rows - scored} key(s) of --rollouts: ${data.totals.missingKeys[0]}`);
    expect(text.stdout).toMatch(/^Throughput: invocation 1: \d+ rows in [\d.]+ s active \([\d.]+ rows\/s\); invocation 3: /m);
    console.log(text.stdout);
  });
});
