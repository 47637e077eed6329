/**
 * The run's full workflow history written beside its outputs (`<stem>_history.json`), so the audit
 * trail outlives the server's retention. Every invocation of the output's workflow id (a fresh run,
 * each `--resume`, `--extend-attempts`, recovery) and every run of its continue-as-new chain, oldest
 * first, each in the JSON form of `temporal workflow show --output json` (replayable with the SDK's
 * `historyFromJSON`), in one compact JSON object:
 * `{"workflowId":"…","runs":[{"runId":"…","invocation":1,"history":{"events":[…]}},…]}`.
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

/** The run ids of the chain ending at the run `runId` (default: the workflow's latest run), oldest first (one event read per run). */
export async function runChain(client: Client, workflowId: string, runId?: string): Promise<string[]> {
  const chain = [runId ?? (await client.workflow.getHandle(workflowId).describe()).runId];
  for (;;) {
    const previous = await previousRun(client, workflowId, chain[0]);
    if (!previous) return chain;
    chain.unshift(previous);
  }
}

/** The run that `runId` continued as new from, or null (it was started: a first run). One event read. */
async function previousRun(client: Client, workflowId: string, runId: string): Promise<string | null> {
  const page = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    maximumPageSize: 1,
  });
  return page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || null;
}

/**
 * One invocation of a workflow id: a `reverify run` that started it (fresh, or again with --resume
 * after an earlier one ended), and the runs it continued as new into. Its state is its last run's.
 */
export interface Invocation {
  /** Run ids, oldest first; the last is the one that holds the invocation's state. */
  runIds: string[];
  /** When its first run started. */
  started: Date;
  /** Its run wrote the output anew (memo `startsOutput`; absent: not said, a run of an earlier version). */
  startsOutput?: boolean;
}

/** The runs listed for a query (visibility), with their status and start; at most `limit`. */
async function listedRuns(client: Client, query: string, limit: number) {
  const runs: Array<{ workflowId: string; runId: string; status: string; startTime: Date; memo?: Record<string, unknown> }> = [];
  for await (const info of client.workflow.list({ query })) {
    if (runs.length >= limit) break;
    runs.push({ workflowId: info.workflowId, runId: info.runId, status: info.status.name, startTime: info.startTime, memo: info.memo });
  }
  return runs;
}

/**
 * Every invocation of the workflow id that wrote the output as it is, oldest first: the executions
 * the server lists for it (visibility; the latest run is asked for directly too, as a just-started
 * one may not be listed yet), each with the runs of its continue-as-new chain, from the latest that
 * wrote the output anew (earlier ones wrote a file `--overwrite` replaced).
 */
export async function invocationsOf(client: Client, workflowId: string, limit = 1000): Promise<Invocation[]> {
  const listed = await listedRuns(client, `WorkflowId = '${workflowId.replace(/'/g, "\\'")}'`, limit);
  const latest = await runChain(client, workflowId).catch(() => null);
  const chains: string[][] = latest ? [latest] : [];
  const covered = new Set(latest ?? []);
  for (const r of listed)
    if (r.status !== 'CONTINUED_AS_NEW' && !covered.has(r.runId)) {
      const chain = await runChain(client, workflowId, r.runId);
      chain.forEach((id) => covered.add(id));
      chains.push(chain);
    }
  const byRun = new Map(listed.map((r) => [r.runId, r]));
  const invocations: Invocation[] = [];
  for (const runIds of chains) {
    const first = byRun.get(runIds[0]) ?? (await client.workflow.getHandle(workflowId, runIds[0]).describe());
    const startsOutput = first.memo?.startsOutput;
    invocations.push({ runIds, started: first.startTime, ...(typeof startsOutput === 'boolean' ? { startsOutput } : {}) });
  }
  invocations.sort((a, b) => a.started.getTime() - b.started.getTime());
  let from = invocations.length - 1;
  while (from > 0 && invocations[from].startsOutput !== true) from--;
  return invocations.slice(from);
}

/**
 * The invocations of every reverify run on the server, newest first, at most `limit`: each listed
 * run that is the last of its chain, with the start of the chain's first run.
 */
export async function listedInvocations(
  client: Client,
  limit: number,
): Promise<Array<{ workflowId: string; runId: string; started: Date }>> {
  const found: Array<{ workflowId: string; runId: string; started: Date }> = [];
  for await (const info of client.workflow.list({ query: "WorkflowType = 'reverifyRun'" })) {
    if (found.length >= limit) break;
    if (info.status.name === 'CONTINUED_AS_NEW') continue;
    // A run listed but gone by the time its chain is read (a run removed after a user error, whose
    // listing outlives its history for a moment) is left out, not the whole list's end.
    const started = await firstStart(client, info).catch(() => null);
    if (started !== null) found.push({ workflowId: info.workflowId, runId: info.runId, started });
  }
  return found;
}

/** When the invocation that `info`'s run belongs to started: its chain's first run. */
async function firstStart(client: Client, info: { workflowId: string; runId: string; startTime: Date }): Promise<Date> {
  const chain = await runChain(client, info.workflowId, info.runId);
  return chain.length === 1 ? info.startTime : (await client.workflow.getHandle(info.workflowId, chain[0]).describe()).startTime;
}

/** One run's history events, as the client fetches them. */
export type RunEvents = NonNullable<Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']>;

/**
 * The events of each run of the workflow's continue-as-new chain, one run at a time, from the
 * latest (or from `runId`) back to the first (each run names the one it continued from). With `collect`, a caller
 * that keeps nothing of a run's events has their garbage collected before the next run is
 * fetched (this generator holds them until then).
 */
export async function* runsNewestFirst(
  client: Client,
  workflowId: string,
  opts: { collect?: boolean; runId?: string } = {},
): AsyncGenerator<RunEvents> {
  let runId: string | undefined = opts.runId;
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

/**
 * Writes the whole history of the output's workflow to `path` atomically: every invocation the
 * server holds (fresh, resumed, extended, recovered; oldest first), each run of its continue-as-new
 * chain with its invocation's number. Returns the number of invocations, runs and events.
 */
export async function writeRunHistory(
  client: Client,
  workflowId: string,
  path: string,
): Promise<{ invocations: number; runs: number; events: number }> {
  // Without a visibility store that lists the workflow id's executions: the latest invocation's chain.
  const invocations = await invocationsOf(client, workflowId).catch(async (): Promise<Invocation[]> => [
    { runIds: await runChain(client, workflowId), started: new Date() },
  ]);
  const runs = invocations.flatMap((inv, i) => inv.runIds.map((runId) => ({ runId, invocation: i + 1 })));
  const tmp = `${path}.tmp-${process.pid}`;
  let events = 0;
  try {
    await writingTo(path, async () => {
      const fh = await open(tmp, 'w');
      try {
        await fh.write(`{"workflowId":${JSON.stringify(workflowId)},"runs":[`);
        for (const [i, { runId, invocation }] of runs.entries()) {
          const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
          events += history.events?.length ?? 0;
          const compact = JSON.stringify(JSON.parse(historyToJSON(history)));
          await fh.write(`${i > 0 ? ',' : ''}{"runId":${JSON.stringify(runId)},"invocation":${invocation},"history":${compact}}`);
          // This run's decoded events and their three JSON copies are garbage now; V8 would keep
          // them beside the next run's (at 10^6 rows the file's write was the end's largest heap).
          if (i < runs.length - 1) collectGarbage();
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
  return { invocations: invocations.length, runs: runs.length, events };
}
