/**
 * `reverify history -o OUT [--key T:R] [--json]`: the audit trail of the run writing OUT, read from
 * its Temporal history (every run of its continue-as-new chain). Without --key, its timeline: phases,
 * batches and rounds, failed attempts, outages, operator actions, the end. With --key, every attempt
 * of one rollout: the history names each one that did not reach the main output (round, batch,
 * activity attempt, worker, time, class, status); the one that did is read from the main output.
 */
import { createReadStream, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Client } from '@temporalio/client';
import { auditKey } from '../contract/batch-audit.js';
import { ConfigError } from '../contract/errors.js';
import { topLevelSpans } from '../contract/json-spans.js';
import { ROLLOUT_INDEX_KEY, TASK_INDEX_KEY } from '../contract/keys.js';
import { connectClient, resolveTemporal } from '../temporal/connection.js';
import { invocationsOf, runChain, type RunEvents } from '../temporal/run-history.js';
import { workflowIdForOutput } from '../temporal/workflow-id.js';
import { attemptsOfKey, HistoryReader, truncatedBatches, type KeyAttempt, type ReadHistory } from './history-events.js';

export interface HistoryOptions {
  output: string;
  key?: string;
  json?: boolean;
}

/**
 * The events of each run of every invocation of the output (each `reverify run` that started its
 * workflow: fresh, `--resume` after an end), with the runs it continued as new into, oldest first,
 * one run at a time: the run ids first (one event read per run), then each run's events.
 */
export async function* runsOldestFirst(client: Client, workflowId: string): AsyncGenerator<RunEvents> {
  const invocations = await invocationsOf(client, workflowId);
  // None listed: the latest run's chain (or the server's "not found").
  const runIds = invocations.length > 0 ? invocations.flatMap((i) => i.runIds) : await runChain(client, workflowId);
  for (const runId of runIds) yield (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

/** Every event of `runsOldestFirst`, in one array (for tests; a large chain is better read run by run). */
export async function fetchRunChain(client: Client, workflowId: string): Promise<RunEvents> {
  const all: RunEvents[] = [];
  for await (const events of runsOldestFirst(client, workflowId)) all.push(events);
  return all.flat();
}

/** The main output's row for the key, if any: its reward. */
async function mainRowOf(output: string, key: string): Promise<{ reward: unknown } | null> {
  if (!existsSync(output)) return null;
  for await (const line of createInterface({ input: createReadStream(output, 'utf8'), crlfDelay: Infinity })) {
    const spans = topLevelSpans(line);
    const t = spans.get(TASK_INDEX_KEY);
    const r = spans.get(ROLLOUT_INDEX_KEY);
    if (!t || !r || auditKey(line.slice(t.start, t.end), line.slice(r.start, r.end)) !== key) continue;
    const reward = spans.get('reward');
    return { reward: reward ? (JSON.parse(line.slice(reward.start, reward.end)) as unknown) : null };
  }
  return null;
}

/** What `--key` prints: the attempts the history names, and the main output's row. */
export interface KeyReport {
  key: string;
  attempts: KeyAttempt[];
  main: { reward: unknown } | null;
  /** Batches that listed only part of their failed rows: the key may have more attempts there. */
  incomplete: Array<{ round: number; batch: number }>;
}

export async function keyReport(read: ReadHistory, output: string, key: string): Promise<KeyReport> {
  const k = key.replace(/\s+/g, '');
  return {
    key: k,
    attempts: attemptsOfKey(read.batches, k),
    main: await mainRowOf(output, k),
    incomplete: truncatedBatches(read.batches).map((b) => ({ round: b.round, batch: b.batch })),
  };
}

export function keyLines(r: KeyReport): string[] {
  const lines = [`Rollout ${r.key}: ${r.attempts.length} attempt(s) not in the main output${r.main ? ', then scored' : ''}`];
  for (const a of r.attempts) {
    const status = a.status !== null ? ` (HTTP ${a.status})` : '';
    lines.push(
      `  round ${a.round + 1}, batch ${a.batch + 1}, activity attempt ${a.attempt}, worker ${a.worker ?? '?'}, ${a.time}: ${a.outcome}${status}`,
    );
  }
  if (r.main) lines.push(`  main output: reward ${JSON.stringify(r.main.reward)}`);
  if (!r.main && r.attempts.length === 0) lines.push('  not in the main output, and no attempt of it is listed in the history');
  if (r.incomplete.length > 0) lines.push(`  (${r.incomplete.length} batch(es) listed only their first failed rows)`);
  return lines;
}

/** A `--key` value: `T:R`, each an index as the rows write it (a whole number, a quoted string, null). */
const KEY_FORMAT = /^\s*(-?\d+|null|"[^"]*")\s*:\s*(-?\d+|null|"[^"]*")\s*$/;

/** Refuses a `--key` that names no rollout (`abc`), before anything is read. */
export function checkKeyFlag(key: string | undefined): void {
  if (key !== undefined && !KEY_FORMAT.test(key))
    throw new ConfigError(`--key ${JSON.stringify(key)}: expected T:R, a rollout's _ng_task_index and _ng_rollout_index, e.g. --key 12:3`);
}

export async function historyCommand(opts: HistoryOptions, out: (line: string) => void): Promise<void> {
  checkKeyFlag(opts.key);
  const output = resolve(opts.output);
  const target = await resolveTemporal();
  const workflowId = workflowIdForOutput(output);
  const { client, close } = await connectClient(target);
  try {
    const read = new HistoryReader();
    let events = 0;
    try {
      for await (const run of runsOldestFirst(client, workflowId)) {
        events += run.length;
        read.add(run);
      }
    } catch (err) {
      if (events > 0) throw err;
      throw new ConfigError(`no run found for output '${output}' (workflow ${workflowId}) on ${target.address}`);
    }
    if (opts.key !== undefined) {
      const report = await keyReport(read, output, opts.key);
      (opts.json ? [JSON.stringify(report, null, 2)] : keyLines(report)).forEach((l) => out(l));
    } else if (opts.json) {
      out(JSON.stringify(read.timeline, null, 2));
    } else {
      out(`History of ${workflowId} (${events} events)`);
      for (const t of read.timeline) out(`${t.time ? t.time.slice(11, 23) : '            '}  ${t.what}`);
    }
  } finally {
    await close();
  }
}
