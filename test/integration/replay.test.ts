/**
 * Determinism: the workflow histories of representative runs replay against the current workflow
 * code, both those this file records now and those saved in test/fixtures/histories.
 *
 * Before 1.0 there are no `patched()` markers (docs/architecture-versioning.md): after a deliberate
 * change of workflow or activity-signature code, re-record every saved history from the current
 * build (it runs the scenarios below against the test's real dev server, then the saved-history
 * test replays what was just written):
 *
 *   REVERIFY_RECORD_HISTORY=1 REVERIFY_TEST_FORKS=1 npx vitest run test/integration/replay.test.ts
 *
 * Each scenario writes `<scenario>-<n>.json` (one file per run of its continue-as-new chain) and
 * first removes its own older files, so the command can be re-run at any time.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { buildRunSpec } from '../../src/cli/build-spec.js';
import { parseRunOptions } from '../../src/config/run-options.js';
import type { RunResult } from '../../src/contract/run-spec.js';
import { cacheDir } from '../../src/temporal/connection.js';
import { createReverifyWorker } from '../../src/temporal/worker.js';
import { workflowBundlePath } from '../../src/temporal/workflow-bundle.js';
import { progressQuery, setMaxRequestsUpdate, setPausedUpdate } from '../../workflows/definitions.js';
import type { reverifyRun } from '../../workflows/reverify-run.js';
import { keysOf, readRows, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { projectRoot } from '../helpers/worker-process.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('replay');
const fixtures = join(projectRoot, 'test', 'fixtures', 'histories');

const rs = useReferenceServer({ port: 0, judgeFailRate: 0.2, seed: 9 });
// Slow enough that a pause lands long before the run's last batch.
const slow = useReferenceServer({ port: 0, latencyMs: 50 });
const client = useTemporalClient(temporal);

async function replay(history: unknown, workflowId: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: { codePath: await workflowBundlePath(cacheDir()) } }, history, workflowId);
}

type History = Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>;

/** The histories of a workflow's continue-as-new chain, from its first run. */
async function chainOf(workflowId: string, firstRunId: string): Promise<History[]> {
  const runs: History[] = [];
  let runId: string | null | undefined = firstRunId;
  while (runId) {
    const history: History = await client().workflow.getHandle(workflowId, runId).fetchHistory();
    runs.push(history);
    const events = history.events ?? [];
    runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  }
  return runs;
}

/** Replays every run of the chain; with REVERIFY_RECORD_HISTORY, saves them as `<scenario>-<n>.json` in place of the older ones. */
async function replayAndRecord(scenario: string, workflowId: string, runs: History[]): Promise<void> {
  for (const h of runs) await replay(h, workflowId);
  if (!process.env.REVERIFY_RECORD_HISTORY) return;
  mkdirSync(fixtures, { recursive: true });
  for (const f of readdirSync(fixtures)) if (new RegExp(`^${scenario}-\\d+\\.json$`).test(f)) rmSync(join(fixtures, f));
  runs.forEach((h, i) => writeFileSync(join(fixtures, `${scenario}-${i}.json`), historyToJSON(h)));
}

describe('determinism: recorded histories replay against the current workflow code', () => {
  it('a fresh run that continues-as-new and re-judges completes correctly, and every run of its chain replays', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 12, repeats: 4 });
    const opts = parseRunOptions({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      concurrency: 4,
      batchSize: 8,
      rejudgeDelayMs: 200,
    });
    const spec = { ...(await buildRunSpec(opts, { heartbeatTimeoutMs: 10_000, maxAttempts: 3 })), continueAsNewAfterBatches: 2 };
    const workflowId = `replay-${process.pid}-${Date.now()}`;
    const w = await createReverifyWorker({ address: temporal.address, namespace: temporal.namespace, cacheDir: cacheDir() });
    const handle = await client().workflow.start<typeof reverifyRun>('reverifyRun', {
      workflowId,
      taskQueue: temporal.taskQueue,
      args: [spec],
    });
    const result: RunResult = await w.worker.runUntil(handle.result());
    await w.close();
    const main = keysOf(readRows(d.output));
    expect(main.length).toBe(result.done);
    expect(new Set(main).size).toBe(main.length);
    expect(result.rounds).toBeGreaterThan(1); // judgeFailRate 0.2: some rows were re-judged
    expect(result.done + result.failed).toBe(result.planned);

    const runs = await chainOf(workflowId, handle.firstExecutionRunId);
    expect(runs.length).toBeGreaterThanOrEqual(3); // 6 batches, CAN after every 2
    await replayAndRecord('rejudge-chain', workflowId, runs);
  });

  it('a random-order run stopped early by --stop-when across continue-as-new, then re-judged: every run of its chain replays', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 12, repeats: 4 }); // 48 rows, 6 batches
    const opts = parseRunOptions({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      concurrency: 2,
      batchSize: 8,
      rejudgeDelayMs: 200,
      order: 'random',
      orderSeed: 4,
      stopWhen: ['rows>=16'],
    });
    const spec = { ...(await buildRunSpec(opts, { heartbeatTimeoutMs: 10_000, maxAttempts: 3 })), continueAsNewAfterBatches: 1 };
    const workflowId = `replay-stopped-${process.pid}-${Date.now()}`;
    const w = await createReverifyWorker({ address: temporal.address, namespace: temporal.namespace, cacheDir: cacheDir() });
    const handle = await client().workflow.start<typeof reverifyRun>('reverifyRun', {
      workflowId,
      taskQueue: temporal.taskQueue,
      args: [spec],
    });
    const result: RunResult = await w.worker.runUntil(handle.result());
    await w.close();
    expect(result.stoppedEarly).toMatchObject({ rule: 'rows>=16', planned: 48 });
    expect(result.coverage!.never_dispatched).toBeGreaterThan(0);
    const runs = await chainOf(workflowId, handle.firstExecutionRunId);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    await replayAndRecord('stopped-chain', workflowId, runs);
  });

  it('a run paused on its request budget, raised by an update, continued as new: every run of its chain replays', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 6, repeats: 4 }); // 24 rows, 3 batches
    const opts = parseRunOptions({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
    const built = await buildRunSpec(
      { ...opts, concurrency: 2, batchSize: 8, rejudge: false },
      { heartbeatTimeoutMs: 10_000, maxAttempts: 1 },
    );
    const spec = { ...built, maxRequests: 10, continueAsNewAfterBatches: 2 };
    const workflowId = `replay-budget-${process.pid}-${Date.now()}`;
    const w = await createReverifyWorker({ address: temporal.address, namespace: temporal.namespace, cacheDir: cacheDir() });
    const handle = await client().workflow.start<typeof reverifyRun>('reverifyRun', {
      workflowId,
      taskQueue: temporal.taskQueue,
      args: [spec],
    });
    const result: RunResult = await w.worker.runUntil(async () => {
      while ((await handle.query(progressQuery)).budgetPaused !== true) await new Promise((r) => setTimeout(r, 100));
      await handle.executeUpdate(setMaxRequestsUpdate, { args: [1000] });
      return handle.result();
    });
    await w.close();
    expect(result.done + result.failed).toBe(24);
    expect(new Set(keysOf(readRows(d.output))).size).toBe(result.done);
    const runs = await chainOf(workflowId, handle.firstExecutionRunId);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    await replayAndRecord('budget-chain', workflowId, runs);
  });

  it('a --resume that re-verifies saved rows (--rejudge-saved all) and takes a noise sample: the run replays', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 4, repeats: 2 }); // 8 rows
    const opts = parseRunOptions({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
    const base = await buildRunSpec({ ...opts, batchSize: 4, rejudge: false, limit: 6 }, { heartbeatTimeoutMs: 10_000, maxAttempts: 1 });
    const w = await createReverifyWorker({ address: temporal.address, namespace: temporal.namespace, cacheDir: cacheDir() });
    const start = (spec: typeof base, workflowId: string) =>
      client().workflow.start<typeof reverifyRun>('reverifyRun', { workflowId, taskQueue: temporal.taskQueue, args: [spec] });
    const workflowId = `replay-saved-${process.pid}-${Date.now()}`;
    const result: RunResult = await w.worker.runUntil(async () => {
      await (await start(base, `${workflowId}-first`)).result();
      const resumed = { ...base, limit: null, resume: true, rejudgeSaved: { keys: 'all' as const }, noiseSample: { rows: 2, seed: 1 } };
      const handle = await start(resumed, workflowId);
      const r = await handle.result();
      await replayAndRecord('saved-noise', workflowId, await chainOf(workflowId, handle.firstExecutionRunId));
      return r;
    });
    await w.close();
    expect(result.messages.some((m) => m.startsWith('Re-verified '))).toBe(true);
    expect(result.noise?.requested).toBe(2);
  });

  it('a run paused by an operator, then cancelled: the cancelled run replays', async () => {
    const d = await sampleRun(tempDir(), slow().port, { tasks: 30, repeats: 4 }); // 120 rows, 15 batches
    const opts = parseRunOptions({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
    const spec = await buildRunSpec({ ...opts, concurrency: 2, batchSize: 8 }, { heartbeatTimeoutMs: 10_000, maxAttempts: 1 });
    const workflowId = `replay-cancel-${process.pid}-${Date.now()}`;
    const w = await createReverifyWorker({ address: temporal.address, namespace: temporal.namespace, cacheDir: cacheDir() });
    const handle = await client().workflow.start<typeof reverifyRun>('reverifyRun', {
      workflowId,
      taskQueue: temporal.taskQueue,
      args: [spec],
    });
    const ended = await w.worker.runUntil(async () => {
      // Paused once a batch is committed (the window then ends: its batches finish, none starts).
      while ((await handle.query(progressQuery)).done === 0) await new Promise((r) => setTimeout(r, 50));
      await handle.executeUpdate(setPausedUpdate, { args: [true] });
      for (;;) {
        const p = await handle.query(progressQuery);
        if (p.phase === 'verify' && p.inFlightRows === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await handle.cancel();
      return handle.result().then(
        () => 'completed',
        (err: Error) => (err.cause instanceof Error ? err.cause.name : String(err)),
      );
    });
    await w.close();
    expect(ended).toBe('CancelledFailure');
    const scored = new Set(keysOf(readRows(d.output))).size;
    expect(scored).toBeGreaterThan(0);
    expect(scored).toBeLessThan(120);
    await replayAndRecord('cancelled', workflowId, await chainOf(workflowId, handle.firstExecutionRunId));
  });

  it('the saved histories (test/fixtures/histories) replay', async () => {
    const files = existsSync(fixtures) ? readdirSync(fixtures).filter((f) => f.endsWith('.json')) : [];
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const history = historyFromJSON(JSON.parse(readFileSync(join(fixtures, f), 'utf8')));
      await replay(history, f);
    }
  });
});
