/**
 * The run's full workflow history written beside its outputs (`<stem>_history.json`), so the audit
 * trail outlives the server's retention. Every run of the continue-as-new chain, oldest first, each
 * in the JSON form of `temporal workflow show --output json` (replayable with the SDK's
 * `historyFromJSON`), in one compact JSON object:
 * `{"workflowId":"…","runs":[{"runId":"…","history":{"events":[…]}},…]}`.
 *
 * Written by the CLI once the run has ended, not by an activity: only after the end does the server
 * have the whole history (an activity runs before the workflow's last events, and its own completion
 * is not in the history yet). The history holds no rows and no secrets (DESIGN.md), so neither does
 * the file. Memory: one run of the chain at a time (each is kept small by continue-as-new), its
 * garbage collected before the next.
 */
import { open, rm } from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { publishFile } from '../io/atomic-file.js';
import { collectGarbage } from '../io/collect-garbage.js';
import { writingTo } from '../io/write-errors.js';

/** The run ids of the chain ending at the workflow's latest run, oldest first (one event read per run). */
export async function runChain(client: Client, workflowId: string): Promise<string[]> {
  const latest = (await client.workflow.getHandle(workflowId).describe()).runId;
  const chain = [latest];
  for (;;) {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, runId: chain[0] },
      maximumPageSize: 1,
    });
    const previous = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!previous) return chain;
    chain.unshift(previous);
  }
}

/** One run's history events, as the client fetches them. */
export type RunEvents = NonNullable<Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']>;

/**
 * The events of each run of the workflow's continue-as-new chain, one run at a time, from the
 * latest back to the first (each run names the one it continued from). With `collect`, a caller
 * that keeps nothing of a run's events has their garbage collected before the next run is
 * fetched (this generator holds them until then).
 */
export async function* runsNewestFirst(client: Client, workflowId: string, opts: { collect?: boolean } = {}): AsyncGenerator<RunEvents> {
  let runId: string | undefined = undefined;
  for (;;) {
    let events: RunEvents = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    const previous: string | null | undefined = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    yield events;
    if (!previous) return;
    if (opts.collect) {
      events = [];
      collectGarbage();
    }
    runId = previous;
  }
}

/** Writes the whole history of the workflow's chain to `path` atomically; returns the number of runs and events. */
export async function writeRunHistory(client: Client, workflowId: string, path: string): Promise<{ runs: number; events: number }> {
  const runIds = await runChain(client, workflowId);
  const tmp = `${path}.tmp-${process.pid}`;
  let events = 0;
  try {
    await writingTo(path, async () => {
      const fh = await open(tmp, 'w');
      try {
        await fh.write(`{"workflowId":${JSON.stringify(workflowId)},"runs":[`);
        for (const [i, runId] of runIds.entries()) {
          const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
          events += history.events?.length ?? 0;
          const compact = JSON.stringify(JSON.parse(historyToJSON(history)));
          await fh.write(`${i > 0 ? ',' : ''}{"runId":${JSON.stringify(runId)},"history":${compact}}`);
          // This run's decoded events and their three JSON copies are garbage now; V8 would keep
          // them beside the next run's (at 10^6 rows the file's write was the end's largest heap).
          if (i < runIds.length - 1) collectGarbage();
        }
        await fh.write(']}\n');
        await fh.sync();
      } finally {
        await fh.close();
      }
    });
    await publishFile(tmp, path);
  } finally {
    await rm(tmp, { force: true });
  }
  return { runs: runIds.length, events };
}
