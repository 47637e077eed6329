import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { buildRunSpec } from '../../src/cli/build-spec.js';
import { parseRunOptions } from '../../src/config/run-options.js';
import type { RunResult } from '../../src/contract/run-spec.js';
import { cacheDir } from '../../src/temporal/connection.js';
import { createReverifyWorker } from '../../src/temporal/worker.js';
import { workflowBundlePath } from '../../src/temporal/workflow-bundle.js';
import { progressQuery, setMaxRequestsUpdate } from '../../workflows/definitions.js';
import type { reverifyRun } from '../../workflows/reverify-run.js';
import { keysOf, readRows, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { projectRoot } from '../helpers/worker-process.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('replay');
const fixtures = join(projectRoot, 'test', 'fixtures', 'histories');

const rs = useReferenceServer({ port: 0, judgeFailRate: 0.2, seed: 9 });
const client = useTemporalClient(temporal);

async function replay(history: unknown, workflowId: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: { codePath: await workflowBundlePath(cacheDir()) } }, history, workflowId);
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

    // Walk the continue-as-new chain from the first run and replay each history.
    type History = Awaited<ReturnType<typeof handle.fetchHistory>>;
    const runs: Array<{ runId: string; history: History }> = [];
    let runId: string | null | undefined = handle.firstExecutionRunId;
    while (runId) {
      const history: History = await client().workflow.getHandle(workflowId, runId).fetchHistory();
      runs.push({ runId, history });
      const events = history.events ?? [];
      runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    }
    expect(runs.length).toBeGreaterThanOrEqual(3); // 6 batches, CAN after every 2
    for (const r of runs) await replay(r.history, workflowId);

    if (process.env.REVERIFY_RECORD_HISTORY) {
      mkdirSync(fixtures, { recursive: true });
      runs.forEach((r, i) => writeFileSync(join(fixtures, `reverify-run-${i}.json`), historyToJSON(r.history)));
    }
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
    let runId: string | null | undefined = handle.firstExecutionRunId;
    let runs = 0;
    while (runId) {
      const history: Awaited<ReturnType<typeof handle.fetchHistory>> = await client().workflow.getHandle(workflowId, runId).fetchHistory();
      await replay(history, workflowId);
      runs++;
      const events = history.events ?? [];
      runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    }
    expect(runs).toBeGreaterThanOrEqual(2);
  });

  it('histories recorded by earlier versions (test/fixtures/histories) still replay', async () => {
    const files = existsSync(fixtures) ? readdirSync(fixtures).filter((f) => f.endsWith('.json')) : [];
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const history = historyFromJSON(JSON.parse(readFileSync(join(fixtures, f), 'utf8')));
      await replay(history, f);
    }
  });
});
