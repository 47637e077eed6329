/**
 * `reverify run --workers N`: the command's own worker and N - 1 `reverify worker` processes it
 * starts share the run (the ceiling across all of them), get its credentials, and end with it,
 * even when the command is killed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../src/cli/exit-codes.js';
import { runCommand } from '../../src/cli/run-command.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { captureIo, keysOf, readRows } from '../helpers/run-fixtures.js';
import { reward, startScriptedServer } from '../helpers/scripted-server.js';
import { tasks, writeFixture } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('local-workers');
const client = useTemporalClient(temporal);
const server = closedAfterEach(startScriptedServer);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BASIC = `Basic ${Buffer.from('judge:s3cret').toString('base64')}`;

/** Whether process `pid` is alive. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The `reverify worker` processes whose parent is `pid`. */
function workerChildren(pid: number): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when it lists nothing
  }
  return out
    .split('\n')
    .filter((l) => l.includes(' worker'))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

/** The worker identities (`pid@host`) that started each activity type of a run. */
async function startedBy(output: string): Promise<Map<string, Set<string>>> {
  const history = await client().workflow.getHandle(workflowIdForOutput(output)).fetchHistory();
  const scheduled = new Map<string, string>();
  const by = new Map<string, Set<string>>();
  for (const e of history.events ?? []) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), s.activityType?.name ?? '');
    const t = e.activityTaskStartedEventAttributes;
    if (t) {
      const name = scheduled.get(String(t.scheduledEventId)) ?? '';
      if (!by.has(name)) by.set(name, new Set());
      by.get(name)!.add(t.identity ?? '');
    }
  }
  return by;
}

describe('reverify run --workers N', () => {
  it(
    "runs batches in this process and in the workers it starts, within one ceiling, with the run's credentials; none is left after it",
    { timeout: 120_000 },
    async () => {
      let inFlight = 0;
      let peak = 0;
      const rs = await server({
        verify: async () => {
          peak = Math.max(peak, ++inFlight);
          await sleep(30);
          inFlight--;
          return reward(1.0);
        },
      });
      const f = writeFixture(tempDir(), { inputs: tasks(Array.from({ length: 600 }, (_, t) => t)) });
      const io = captureIo();
      const result = await runCommand(
        {
          inputs: f.inputs,
          rollouts: f.rollouts,
          output: f.output,
          servers: [`rs=${rs.url.replace('http://', 'http://judge:s3cret@')}`],
          concurrency: 6,
          batchSize: 10,
          maxAttempts: 1,
        },
        { worker: true, workers: 3, heartbeatTimeoutMs: 10_000 },
        io,
      );
      expect(result.done).toBe(600);
      const rows = readRows(f.output);
      expect(new Set(keysOf(rows)).size).toBe(600);
      expect(rows).toHaveLength(600);
      // The ceiling is the run's, across every process.
      expect(peak).toBeLessThanOrEqual(6);
      // Every request, whichever process sent it, carried the credentials.
      for (const r of rs.requests) expect(r.headers.authorization).toBe(BASIC);
      const batches = [...((await startedBy(f.output)).get('verifyBatch') ?? [])];
      const own = batches.filter((id) => id.startsWith(`${process.pid}@`));
      const others = batches.filter((id) => !id.startsWith(`${process.pid}@`));
      expect(own.length).toBe(1);
      expect(others.length).toBeGreaterThanOrEqual(1);
      // The workers it started are gone once the command has returned.
      for (const id of others) expect(alive(Number(id.split('@')[0]))).toBe(false);
      expect(io.lines.join('\n')).not.toContain('Warning: local worker');
    },
  );

  it(
    'a command killed with SIGKILL leaves no worker behind: each ends when its channel to the command closes',
    { timeout: 120_000 },
    async () => {
      const rs = await server({
        verify: async () => {
          await sleep(200);
          return reward(1.0);
        },
      });
      const f = writeFixture(tempDir(), { inputs: tasks(Array.from({ length: 200 }, (_, t) => t)) });
      const cli = spawn(
        process.execPath,
        [
          reverifyBin,
          'run',
          '--inputs',
          f.inputs,
          '--rollouts',
          f.rollouts,
          '-o',
          f.output,
          '--server',
          rs.flag('rs'),
          '--concurrency',
          '2',
          '--workers',
          '3',
        ],
        { env: { ...process.env, ...temporal.env }, stdio: 'ignore' },
      );
      let pollingNow: number[] = [];
      try {
        let children: number[] = [];
        for (const t0 = Date.now(); children.length < 2 && Date.now() - t0 < 60_000; await sleep(100)) children = workerChildren(cli.pid!);
        expect(children).toHaveLength(2);
        // Once both poll the run's task queue, kill the command.
        const polling = async () => {
          const q = await client().workflowService.describeTaskQueue({
            namespace: temporal.namespace,
            taskQueue: { name: temporal.taskQueue },
            taskQueueType: 2, // TASK_QUEUE_TYPE_ACTIVITY
          });
          return (q.pollers ?? []).map((p) => Number((p.identity ?? '').split('@')[0]));
        };
        for (const t0 = Date.now(); !children.every((pid) => pollingNow.includes(pid)) && Date.now() - t0 < 60_000; await sleep(200))
          pollingNow = await polling();
        expect(children.filter((pid) => pollingNow.includes(pid))).toEqual(children);
        cli.kill('SIGKILL');
        for (const t0 = Date.now(); children.some(alive) && Date.now() - t0 < 30_000;) await sleep(100);
        expect(children.filter(alive)).toEqual([]);
      } finally {
        cli.kill('SIGKILL');
        await client()
          .workflow.getHandle(workflowIdForOutput(f.output))
          .terminate('test over')
          .catch(() => undefined);
      }
    },
  );

  it('--workers below 1, or with --no-worker: one line that says what to pass, nothing started', async () => {
    const f = writeFixture(tempDir(), { inputs: tasks([0]) });
    const raw = { inputs: f.inputs, rollouts: f.rollouts, output: f.output };
    const zero = describeFailure(
      await runCommand(raw, { worker: true, workers: 0, heartbeatTimeoutMs: 10_000 }, captureIo()).catch((e: unknown) => e),
    );
    expect(zero).toEqual({ line: 'Error: --workers: Input should be greater than or equal to 1 (got 0)', code: 1 });
    const none = describeFailure(
      await runCommand(raw, { worker: false, workers: 2, heartbeatTimeoutMs: 10_000 }, captureIo()).catch((e: unknown) => e),
    );
    expect(none.code).toBe(1);
    expect(none.line).toBe(
      "Error: --workers 2 starts workers beside this command's own, and --no-worker runs none here: drop one of them (or start `reverify worker` processes yourself)",
    );
    expect(
      await client()
        .workflow.getHandle(workflowIdForOutput(f.output))
        .describe()
        .catch(() => null),
    ).toBeNull();
  });
});
