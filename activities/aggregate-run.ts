import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { stripForAggregation } from '../src/contract/aggregate-request.js';
import { InputError } from '../src/contract/errors.js';
import { FailureType } from '../src/contract/failure-types.js';
import { keyOf } from '../src/contract/row-key.js';
import type { AgentKeyMetrics } from '../src/contract/run-spec.js';
import { resolveServer, type RoutingTable } from '../src/config/routing.js';
import { AggregateGroups, type SortedGroup } from '../src/aggregation/aggregate-groups.js';
import { aggregateToMetricsFile, aggregationTargetOf, type PostAggregateMetrics } from '../src/aggregation/aggregate-metrics-file.js';
import { isBlank, jsonlLines } from '../src/io/jsonl-lines.js';
import { withScratchDir } from '../src/io/scratch-dir.js';
import { AggregateMetricsError } from '../src/verifier/errors.js';
import type { ActivityDeps } from './deps.js';
import { whileHeartbeating } from './heartbeating.js';
import { outputPathsFor } from './output-paths.js';
import { failFastOnUserError } from './user-errors.js';

export interface AggregateRequest {
  output: string;
  metrics: string;
  routing: RoutingTable;
  timeoutMs: number;
}

/** Tuning of the aggregation sort (tests force it to spill to disk). */
export interface AggregateOptions {
  /** Records the sort holds in memory before it writes a run file. */
  maxRecords?: number;
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
      throw new InputError(
        `${output}:${line.lineNo}: malformed JSON (${(err as Error).message}); fix or remove this line, then run \`reverify aggregate\``,
      );
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
    });
  });
}

/**
 * True when the server answered and retrying the same request cannot change its answer: a 2xx that
 * is not the reply of spec §2.3 (not JSON, or not its shape), a 3xx, a 4xx other than 408/429. The
 * rest (no answer, a timeout, 408, 429, 5xx) may pass: the workflow retries those, a bounded number of times.
 */
export function isPermanentAggregationError(err: AggregateMetricsError): boolean {
  const s = err.status;
  return s !== undefined && s < 500 && s !== 408 && s !== 429;
}

/**
 * Aggregate phase (spec §4.13, §1.7): per agent, POST the stripped main-output rows, sorted by key,
 * to its resources server's `/aggregate_metrics`, and write `<out>_aggregate_metrics.json` with the
 * entries in completion order. No rows: no call and no file. The grouping, body streaming and file
 * writing are shared with `reverify aggregate` (src/io/aggregate-groups.ts, aggregate-metrics-file.ts).
 * A reply that retrying cannot fix is a non-retryable `AggregationFailed`; the requests in flight
 * are aborted when the run is cancelled.
 */
export function aggregateRun(deps: ActivityDeps) {
  return (req: AggregateRequest): Promise<{ metricsPath: string | null; keyMetrics: AgentKeyMetrics[] }> =>
    failFastOnUserError(() =>
      whileHeartbeating(async () => {
        const signal = Context.current().cancellationSignal;
        const post: PostAggregateMetrics = (server, body, replyPath) =>
          deps.verifier(req.timeoutMs).aggregateMetrics(server, req.routing.servers[server], body, replyPath, signal);
        try {
          return await aggregateOutput(req, post);
        } catch (err) {
          if (err instanceof AggregateMetricsError && isPermanentAggregationError(err)) {
            throw ApplicationFailure.nonRetryable(err.message, FailureType.AggregationFailed);
          }
          throw err;
        }
      }),
    );
}
