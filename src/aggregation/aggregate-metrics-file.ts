/**
 * Aggregation shared by a run's aggregate phase (spec §4.13) and `reverify aggregate` (§4.15):
 * rows grouped by (agent, resources server) in first-seen order (`aggregate-groups.ts`), each
 * group's rows stripped and written from disk in key order into one `/aggregate_metrics` body file
 * (`request-body-file.ts`), and the metrics file (§1.7) with one entry per group in completion order. Rows are referred to by
 * their place (file, byte offset, length) and read back when sent; places wait in files sorted by
 * key, so memory holds neither rows nor places: it is flat in the number of rows.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { RowKey } from '../contract/row-key.js';
import { rowRouteOf, runKeyOf, type RowRoute } from '../contract/row-route.js';
import type { AgentKeyMetrics } from '../contract/run-spec.js';
import type { SortedGroup } from './aggregate-groups.js';
import { AGGREGATE_FIELD_DEFAULTS, AGGREGATE_FIELDS, type AggregateReplyFile } from './aggregate-reply.js';
import { publishFile } from '../io/atomic-file.js';
import { copyJsonIndented } from '../io/json-indent-copy.js';
import { OutputBuffer } from '../io/output-buffer.js';
import { readPlaceFile, type Place } from './place-file.js';
import { writeAggregateRequestBody } from './request-body-file.js';

/** A row's key and where it sits: `files[file]`, bytes `[offset, offset + length)` (no line terminator). */
export interface RowPlace extends Place {
  key: RowKey;
}

/** What aggregation reads from a parsed row: the run it belongs to, and its routing fields (for `resolveServer`). */
export interface AggregationTarget {
  /** `rollout_run_key`: the environment-server stamp, else the agent's name. */
  runKey: string;
  route: RowRoute;
}

/**
 * A parsed output row's run key and routing fields (NeMo Gym 0.7.0); `null` for a row with neither
 * a string `_ng_environment_server` nor a string `agent_ref.name`, which aggregation skips (spec
 * §4.13 step 2).
 */
export function aggregationTargetOf(row: Record<string, unknown>): AggregationTarget | null {
  const route = rowRouteOf(row);
  const runKey = runKeyOf(route);
  return runKey === undefined ? null : { runKey, route };
}

/**
 * Sends one group's body, the file `bodyPath`, to the resources server `server`'s
 * `/aggregate_metrics`; the reply goes to the file `replyPath` (see `readAggregateReply`). Stops
 * (rejects) when `signal` aborts.
 */
export type PostAggregateMetrics = (
  server: string,
  bodyPath: string,
  replyPath: string,
  signal: AbortSignal,
) => Promise<AggregateReplyFile>;

let tmpCounter = 0;

/**
 * Writes `<out>_aggregate_metrics.json` (spec §1.7) from replies on disk as NeMo Gym 0.7.0 writes
 * it: laid out exactly as `JSON.stringify(entries, null, 2)` would (2-space indent, no trailing
 * newline), one entry per agent with `agent_ref` then the reply's kept fields (`AGGREGATE_FIELDS`,
 * a missing one as its default). Streams: memory holds a chunk, whatever the size of the replies.
 * Atomic: temp file, fsync, rename.
 */
export async function writeMetricsFile(path: string, entries: ReadonlyArray<{ agent: string; reply: AggregateReplyFile }>): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${++tmpCounter}`;
  const fh = await open(tmp, 'w');
  try {
    const out = new OutputBuffer(fh, path);
    out.text('[');
    for (const [i, { agent, reply }] of entries.entries()) {
      out.text(`${i ? ',' : ''}\n  {\n    "agent_ref": {\n      "name": ${JSON.stringify(agent)}\n    }`);
      for (const field of AGGREGATE_FIELDS) {
        out.text(`,\n    "${field}": `);
        const span = reply.spans[field];
        if (span) await copyJsonIndented(reply.path, span, 2, out);
        else out.text(AGGREGATE_FIELD_DEFAULTS[field]);
      }
      out.text('\n  }');
    }
    out.text(entries.length ? '\n]' : ']');
    await out.drain();
    await fh.sync();
  } finally {
    await fh.close();
  }
  await publishFile(tmp, path);
}

/**
 * Per group, concurrently: write its stripped rows, read in key order from its place file (see
 * `AggregateGroups.sorted`), as a body file in `scratchDir`, and POST it, the reply going to a file
 * there too; then write `metricsPath` (entries in completion order) from the replies on disk. No
 * groups: no request and no file, `metricsPath: null`. When a group fails, the others' requests
 * are aborted and waited for, the first failure rejects, and the file is not written.
 */
export async function aggregateToMetricsFile(args: {
  files: readonly string[];
  groups: readonly SortedGroup[];
  strip: (rowRaw: string) => string;
  post: PostAggregateMetrics;
  metricsPath: string;
  /** Where the bodies and replies are written (a scratch directory the caller removes). */
  scratchDir: string;
  /** Aborts every request (e.g. the activity's cancellation). */
  signal?: AbortSignal;
}): Promise<{ metricsPath: string | null; keyMetrics: AgentKeyMetrics[] }> {
  if (args.groups.length === 0) return { metricsPath: null, keyMetrics: [] };
  const entries: Array<{ agent: string; reply: AggregateReplyFile }> = [];
  const siblings = new AbortController();
  const signal = args.signal ? AbortSignal.any([args.signal, siblings.signal]) : siblings.signal;
  const settled = await Promise.allSettled(
    args.groups.map(async (g, i) => {
      try {
        const bodyPath = join(args.scratchDir, `body${i}.json`);
        await writeAggregateRequestBody(args.files, readPlaceFile(g.placesPath), args.strip, bodyPath);
        const reply = await args.post(g.server, bodyPath, join(args.scratchDir, `reply${i}.json`), signal);
        entries.push({ agent: g.agent, reply });
      } catch (err) {
        siblings.abort(new Error('another group of the aggregation failed'));
        throw err;
      }
    }),
  );
  // The first failure that is not another group's abort.
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected' && s.reason !== siblings.signal.reason);
  if (failed) throw failed.reason;
  await writeMetricsFile(args.metricsPath, entries);
  return { metricsPath: args.metricsPath, keyMetrics: entries.map((e) => ({ agent: e.agent, keyMetrics: e.reply.keyMetrics })) };
}
