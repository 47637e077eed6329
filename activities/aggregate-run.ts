import { open } from 'node:fs/promises';
import { heartbeat } from '@temporalio/activity';
import { stripForAggregation } from '../src/contract/aggregate-request.js';
import { InputError } from '../src/contract/errors.js';
import { compareKeys, keyOf, type RowKey } from '../src/contract/row-key.js';
import type { AgentKeyMetrics } from '../src/contract/run-spec.js';
import { resolveServer, type RoutingTable } from '../src/config/routing.js';
import { writeFileAtomic } from '../src/io/atomic-file.js';
import { isBlank, jsonlLines } from '../src/io/jsonl-lines.js';
import { readRange } from '../src/io/read-range.js';
import type { ActivityDeps } from './deps.js';
import { failFastOnUserError } from './user-errors.js';

export interface AggregateRequest {
  output: string;
  metrics: string;
  routing: RoutingTable;
  timeoutMs: number;
}

interface RowPlace {
  key: RowKey;
  offset: number;
  length: number;
}

interface Group {
  agent: string;
  server: string;
  rows: RowPlace[];
}

/** Groups the main output's rows by (agent, resources server), in first-seen order (spec §4.13). */
async function groupRows(output: string, routing: RoutingTable): Promise<Group[]> {
  const groups = new Map<string, Group>();
  let n = 0;
  for await (const line of jsonlLines(output)) {
    if (isBlank(line.text)) continue;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line.text);
    } catch (err) {
      throw new InputError(`${output}:${line.lineNo}: malformed JSON (${(err as Error).message}); fix or remove this line, then run \`reverify aggregate\``);
    }
    const agent = (row.agent_ref as { name?: unknown } | undefined)?.name;
    if (typeof agent !== 'string') continue;
    const server = resolveServer(routing, agent, typeof row.task_source === 'string' ? row.task_source : undefined);
    const id = `${agent}\u0000${server}`;
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { agent, server, rows: [] }));
    g.rows.push({ key: keyOf(row) ?? { task: null, rollout: null }, offset: line.offset, length: line.length });
    if (++n % 10000 === 0) heartbeat({ rows: n });
  }
  return [...groups.values()];
}

/** The `/aggregate_metrics` body of one group, streamed from disk in key order (spec §2.3). */
async function* requestBody(output: string, rows: RowPlace[]): AsyncGenerator<string> {
  const fh = await open(output, 'r');
  try {
    yield '{"verify_responses":[';
    for (let i = 0; i < rows.length; i++) {
      const raw = await readRange(fh, rows[i].offset, rows[i].length);
      yield (i ? ',' : '') + stripForAggregation(raw);
    }
    yield ']}';
  } finally {
    await fh.close();
  }
}

/**
 * Aggregate phase (spec §4.13, §1.7): per agent, POST the stripped main-output rows, sorted by key,
 * to its resources server's `/aggregate_metrics`, and write `<out>_aggregate_metrics.json` with the
 * entries in completion order. No rows: no call and no file.
 */
export function aggregateRun(deps: ActivityDeps) {
  return (req: AggregateRequest): Promise<{ metricsPath: string | null; keyMetrics: AgentKeyMetrics[] }> =>
    failFastOnUserError(async () => {
      const groups = await groupRows(req.output, req.routing);
      if (groups.length === 0) return { metricsPath: null, keyMetrics: [] };
      const client = deps.verifier(req.timeoutMs);
      const entries: unknown[] = [];
      const keyMetrics: AgentKeyMetrics[] = [];
      await Promise.all(
        groups.map(async (g) => {
          g.rows.sort((a, b) => compareKeys(a.key, b.key));
          const m = await client.aggregateMetrics(g.server, req.routing.servers[g.server], requestBody(req.output, g.rows));
          entries.push({
            agent_ref: { name: g.agent },
            agent_metrics: m.agent_metrics,
            key_metrics: m.key_metrics,
            group_level_metrics: m.group_level_metrics,
          });
          keyMetrics.push({ agent: g.agent, keyMetrics: m.key_metrics });
        }),
      );
      await writeFileAtomic(req.metrics, JSON.stringify(entries, null, 2));
      return { metricsPath: req.metrics, keyMetrics };
    });
}
