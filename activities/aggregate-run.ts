import { stripForAggregation } from '../src/contract/aggregate-request.js';
import { InputError } from '../src/contract/errors.js';
import { keyOf } from '../src/contract/row-key.js';
import type { AgentKeyMetrics } from '../src/contract/run-spec.js';
import { resolveServer, type RoutingTable } from '../src/config/routing.js';
import {
  AggregateGroups,
  aggregateToMetricsFile,
  aggregationTargetOf,
  type AggregateGroup,
} from '../src/io/aggregate-metrics-file.js';
import { isBlank, jsonlLines } from '../src/io/jsonl-lines.js';
import type { ActivityDeps } from './deps.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface AggregateRequest {
  output: string;
  metrics: string;
  routing: RoutingTable;
  timeoutMs: number;
}

/** Groups the main output's rows by (agent, resources server), in first-seen order (spec §4.13). */
async function groupRows(output: string, routing: RoutingTable): Promise<AggregateGroup[]> {
  const groups = new AggregateGroups();
  for await (const line of jsonlLines(output)) {
    if (isBlank(line.text)) continue;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line.text);
    } catch (err) {
      throw new InputError(`${output}:${line.lineNo}: malformed JSON (${(err as Error).message}); fix or remove this line, then run \`reverify aggregate\``);
    }
    const target = aggregationTargetOf(row);
    if (target === null) continue;
    const server = resolveServer(routing, target.agent, target.taskSource);
    groups.add(target.agent, server, { key: keyOf(row) ?? { task: null, rollout: null }, file: 0, offset: line.offset, length: line.length });
  }
  return groups.list();
}

/**
 * Aggregate phase (spec §4.13, §1.7): per agent, POST the stripped main-output rows, sorted by key,
 * to its resources server's `/aggregate_metrics`, and write `<out>_aggregate_metrics.json` with the
 * entries in completion order. No rows: no call and no file. The grouping, body streaming and file
 * writing are shared with `reverify aggregate` (src/io/aggregate-metrics-file.ts).
 */
export function aggregateRun(deps: ActivityDeps) {
  return (req: AggregateRequest): Promise<{ metricsPath: string | null; keyMetrics: AgentKeyMetrics[] }> =>
    failFastOnUserError(() => whileHeartbeating(async () => {
      const groups = await groupRows(req.output, req.routing);
      if (groups.length === 0) return { metricsPath: null, keyMetrics: [] };
      const client = deps.verifier(req.timeoutMs);
      return aggregateToMetricsFile({
        files: [req.output],
        groups,
        strip: stripForAggregation,
        post: (server, body) => client.aggregateMetrics(server, req.routing.servers[server], body),
        metricsPath: req.metrics,
      });
    }));
}
