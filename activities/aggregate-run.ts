import { Context } from '@temporalio/activity';
import { stripForAggregation } from '../src/contract/aggregate-request.js';
import { keyOf } from '../src/contract/row-key.js';
import type { AgentKeyMetrics } from '../src/contract/run-spec.js';
import { resolveServer } from '../src/config/resolve-server.js';
import type { RoutingTable } from '../src/config/routing.js';
import { AggregateGroups, type SortedGroup } from '../src/aggregation/aggregate-groups.js';
import { aggregateToMetricsFile, aggregationTargetOf, type PostAggregateMetrics } from '../src/aggregation/aggregate-metrics-file.js';
import { isBlank, jsonlLines } from '../src/io/jsonl-lines.js';
import { withScratchDir } from '../src/io/scratch-dir.js';
import { patientPost, type AggregateTransport } from './aggregate-post.js';
import { announcedPost } from './aggregate-wait.js';
import { AGGREGATE_TIMEOUT_FLOOR_MS } from '../src/contract/aggregate-timeout.js';
import type { ActivityDeps } from './deps.js';
import { whileHeartbeating } from './heartbeating.js';
import { outputPathsFor } from '../src/contract/output-paths.js';
import { withRunLock } from '../src/io/run-lock.js';
import { failFastOnUserError } from './user-errors.js';
import { malformedJsonLine } from '../src/contract/line-errors.js';

export interface AggregateRequest {
  output: string;
  metrics: string;
  routing: RoutingTable;
  /** The deadline of one `POST /aggregate_metrics` (src/contract/aggregate-timeout.ts). */
  timeoutMs: number;
  /** Wait before retrying a group the server is up but fails on (tests); see `aggregate-post.ts`. */
  serverErrorDelayMs?: number;
}

/** Options of the aggregation: the sort's tuning (tests force it to spill to disk), and its cancellation. */
export interface AggregateOptions {
  /** Records the sort holds in memory before it writes a run file. */
  maxRecords?: number;
  /** Aborts the requests (the activity's cancellation). */
  signal?: AbortSignal;
}

/**
 * Groups the main output's rows by (run, resources server), in first-seen order (spec §4.13, `aggregate-groups.ts`),
 * each group's places sorted by key into a place file in `dir`.
 */
async function groupRows(output: string, routing: RoutingTable, dir: string, opts: AggregateOptions): Promise<SortedGroup[]> {
  const groups = new AggregateGroups({ dir, maxRecords: opts.maxRecords });
  for await (const line of jsonlLines(output)) {
    if (isBlank(line.text)) continue;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line.text) as Record<string, unknown>;
    } catch (err) {
      throw malformedJsonLine(output, line.lineNo, line.text, err, ', then run `reverify aggregate`');
    }
    const target = aggregationTargetOf(row);
    if (target === null) continue;
    const server = resolveServer(routing, target.route);
    await groups.add(target, server, {
      key: keyOf(row) ?? { task: null, rollout: null },
      file: 0,
      offset: line.offset,
      length: line.length,
    });
  }
  return groups.sorted();
}

/**
 * The aggregate phase's work (see `aggregateRun`) with the POST given: groups the rows, sends each
 * group's body and writes the metrics file. Memory is flat in the number of rows: the grouping is
 * an external sort whose run and place files go to a scratch directory in the run's work
 * directory (`.<output>.reverify/`, derived from `req.output`), removed when done.
 */
export async function aggregateOutput(
  req: AggregateRequest,
  post: PostAggregateMetrics,
  opts: AggregateOptions = {},
): Promise<{ metricsPath: string | null; keyMetrics: AgentKeyMetrics[] }> {
  return withScratchDir(outputPathsFor(req.output, '').workDir, 'aggregate-', async (dir) => {
    const groups = await groupRows(req.output, req.routing, dir, opts);
    return aggregateToMetricsFile({
      files: [req.output],
      groups,
      strip: stripForAggregation,
      post,
      metricsPath: req.metrics,
      scratchDir: dir,
      signal: opts.signal,
    });
  });
}

/**
 * Aggregate phase (spec §4.13, §1.7): per agent, POST the stripped main-output rows, sorted by key,
 * to its resources server's `/aggregate_metrics`, and write `<out>_aggregate_metrics.json` with the
 * entries in completion order. No rows: no call and no file. The grouping, body files and file
 * writing are shared with `reverify aggregate` (src/aggregation/). A failure that retrying cannot
 * fix is a non-retryable `AggregationFailed`; an outage of the server fails the attempt, and
 * Temporal retries it (see `aggregate-post.ts`). The requests in flight are aborted when the run is
 * cancelled.
 */
export function aggregateRun(deps: ActivityDeps) {
  return (req: AggregateRequest): Promise<{ metricsPath: string | null; keyMetrics: AgentKeyMetrics[] }> => {
    const ctx = Context.current();
    // One client for every run's aggregations: each request carries its own deadline.
    const client = deps.verifier(AGGREGATE_TIMEOUT_FLOOR_MS);
    const transport: AggregateTransport = {
      post: (server, url, bodyPath, replyPath, signal) => client.aggregateMetrics(server, url, bodyPath, replyPath, signal, req.timeoutMs),
      answers: (url, signal) => client.answers(url, signal),
    };
    // Its heartbeats say what it waits for (src/contract/aggregate-wait.ts).
    const announced = announcedPost(
      patientPost(transport, req.routing.servers, req.serverErrorDelayMs),
      req.routing.servers,
      req.timeoutMs,
      (w) => ctx.heartbeat(w),
    );
    return failFastOnUserError(() =>
      whileHeartbeating(
        () => withRunLock(req.output, () => aggregateOutput(req, announced.post, { signal: ctx.cancellationSignal })),
        announced.current,
      ),
    );
  };
}
