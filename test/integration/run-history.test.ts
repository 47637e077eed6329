/**
 * Issue 9 item 8: a finished run writes its full workflow history beside its outputs
 * (`<stem>_history.json`): every run of the continue-as-new chain, oldest first, each replayable.
 * Continue-as-new is forced every 2 batches (the CLI's test hook), through the in-process command.
 */
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectClient } from '../../src/temporal/connection.js';
import { writeRunHistory } from '../../src/temporal/run-history.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { runReverify, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('run-history');
const client = useTemporalClient(temporal);
const rs = useReferenceServer({});
const flaky = useReferenceServer({ judgeFailRate: 0.4, seed: 5 });

afterEach(() => {
  vi.unstubAllEnvs();
});

interface HistoryFile {
  workflowId: string;
  runs: Array<{ runId: string; invocation: number; history: { events: Array<Record<string, unknown>> } }>;
}

describe('the workflow history beside the outputs', () => {
  it('a run that continued as new writes every generation, oldest first, compact, replayable; no row content', async () => {
    vi.stubEnv('REVERIFY_TEST_CONTINUE_AS_NEW_AFTER_BATCHES', '2');
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 6, repeats: 2 });
    const run = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], batchSize: 2 });
    expect(run.error).toBeNull();
    const path = join(dir, 'out_history.json');
    expect(run.lines.some((l) => l.startsWith(`Workflow history: ${path} (`))).toBe(true);
    const text = readFileSync(path, 'utf8');
    expect(text.trimEnd().split('\n')).toHaveLength(1); // compact
    const file = JSON.parse(text) as HistoryFile;
    expect(file.workflowId).toBe(workflowIdForOutput(d.output));
    // 12 rows in batches of 2: 6 batches, a new generation every 2.
    expect(file.runs.length).toBeGreaterThanOrEqual(3);
    const first = file.runs[0].history.events[0];
    expect(first.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');
    expect((first.workflowExecutionStartedEventAttributes as Record<string, unknown>).continuedExecutionRunId).toBeUndefined();
    for (const [i, r] of file.runs.entries()) {
      const events = r.history.events;
      const last = events[events.length - 1];
      const end = i < file.runs.length - 1 ? 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW' : 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED';
      expect(last.eventType).toBe(end);
      if (i > 0)
        expect((events[0].workflowExecutionStartedEventAttributes as Record<string, unknown>).continuedExecutionRunId).toBe(
          file.runs[i - 1].runId,
        );
      expect(historyFromJSON(r.history).events?.length).toBe(events.length);
    }
    // The same events the server holds, every generation.
    const total = file.runs.reduce((n, r) => n + r.history.events.length, 0);
    let served = 0;
    for (const r of file.runs) served += (await client().workflow.getHandle(file.workflowId, r.runId).fetchHistory()).events?.length ?? 0;
    expect(total).toBe(served);
    // Rows never enter the history, so not the file either: no response text.
    const response = readFileSync(d.rolloutsPath, 'utf8').split('\n')[0];
    const content = /"text":"([^"]{20,})"/.exec(response)?.[1];
    expect(content).toBeTruthy();
    expect(text).not.toContain(content);
    // The report reads the chain one generation at a time: its timeline has the batches of all of them.
    const html = readFileSync(join(dir, 'out_report.html'), 'utf8');
    const data = JSON.parse(/<script id="report-data" type="application\/json">([^<]*)<\/script>/.exec(html)![1]) as {
      timeline: { progress: { rows: number }[] };
    };
    expect(data.timeline.progress.at(-1)!.rows).toBe(12);
  });

  it('an output written by two invocations (a fresh run, then --resume) holds both, oldest first', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, flaky().port, { tasks: 6, repeats: 2 });
    const opts = { inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], batchSize: 4 };
    const fresh = await runReverify(opts);
    expect(fresh.error?.code ?? 3).toBe(3);
    const resumed = await runReverify({ ...opts, resume: true });
    expect(resumed.error?.code ?? 0, resumed.lines.join('\n')).not.toBe(2);
    const path = join(dir, 'out_history.json');
    const file = JSON.parse(readFileSync(path, 'utf8')) as HistoryFile;
    expect(file.runs.map((r) => r.invocation)).toEqual([1, 2]);
    // Each invocation's run starts the workflow afresh (no continue-as-new between them); both ended.
    for (const r of file.runs) {
      const events = r.history.events;
      expect(events[0].eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');
      expect((events[0].workflowExecutionStartedEventAttributes as Record<string, unknown>).continuedExecutionRunId).toBeUndefined();
      expect(events.at(-1)!.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED');
      expect(historyFromJSON(r.history).events?.length).toBe(events.length);
    }
    expect(new Set(file.runs.map((r) => r.runId)).size).toBe(2);
    expect(resumed.lines).toContain(
      `Workflow history: ${path} (${file.runs.reduce((n, r) => n + r.history.events.length, 0)} events in 2 runs of 2 invocations)`,
    );
  });

  it('--overwrite starts the output anew: its history file holds that invocation only, and the resume after it', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, flaky().port, { tasks: 6, repeats: 2 });
    const opts = { inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], batchSize: 4 };
    await runReverify(opts);
    const again = await runReverify({ ...opts, overwrite: true });
    const path = join(dir, 'out_history.json');
    const first = JSON.parse(readFileSync(path, 'utf8')) as HistoryFile;
    expect(first.runs.map((r) => r.invocation)).toEqual([1]);
    expect(again.lines.some((l) => l.startsWith(`Workflow history: ${path} (`) && l.endsWith(' events in 1 run of the chain)'))).toBe(true);
    await runReverify({ ...opts, resume: true });
    const file = JSON.parse(readFileSync(path, 'utf8')) as HistoryFile;
    expect(file.runs.map((r) => r.invocation)).toEqual([1, 2]);
    expect(file.runs[0].runId).toBe(first.runs[0].runId);
  });

  it('a run stopped by bad input (found by its plan, inside the workflow) writes no history file', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 2, repeats: 1 });
    appendFileSync(d.rolloutsPath, '{"_ng_task_index": 0, oops\n');
    const run = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
    expect(run.error?.code).toBe(1);
    // The workflow ran (its plan found the line) and was deleted: no `Started run` line, no history file.
    expect(run.error?.line).toMatch(/rollouts\.jsonl:3/);
    expect(run.lines.join('\n')).not.toMatch(/Started run/);
    expect(existsSync(join(dir, 'out_history.json'))).toBe(false);
  });

  it("a history whose page is larger than gRPC's default 4 MiB is written (a 10^5-row run's was 4.7 MB)", async () => {
    // A run with no worker (its task queue has none), signalled five times with 1.5 MB each: one
    // page of 7.5 MB. The signals' names are not the workflow's; the server records them all the same.
    const dir = tempDir();
    const workflowId = `history-large-page-${process.pid}-${Date.now()}`;
    const handle = await client().workflow.start('reverifyRun', { taskQueue: `no-worker-${workflowId}`, workflowId, args: [] });
    for (let i = 0; i < 5; i++) await handle.signal(`large-${i}`, 'x'.repeat(1_500_000));
    await handle.terminate('test');
    const { client: cli, close } = await connectClient({
      address: temporal.address,
      namespace: temporal.namespace,
      uiUrl: null,
      embedded: false,
      started: false,
    });
    try {
      const path = join(dir, 'large_history.json');
      const written = await writeRunHistory(cli, workflowId, path);
      expect(written.runs).toBe(1);
      const file = JSON.parse(readFileSync(path, 'utf8')) as HistoryFile;
      const signalled = file.runs[0].history.events.filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED');
      expect(signalled).toHaveLength(5);
      expect(statSync(path).size).toBeGreaterThan(4 * 1024 * 1024 * 1.3);
    } finally {
      await close();
    }
  });
});
