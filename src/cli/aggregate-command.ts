/**
 * `reverify aggregate` (spec §4.15): merge the shards of a sharded run made with
 * `--disable-aggregation` and compute their global aggregate metrics. A plain command: it reads
 * files and calls `/aggregate_metrics`, and needs no Temporal server.
 *
 * Where it deliberately differs from NeMo Gym's `gym eval aggregate` (spec §8 item 7):
 * - `*_failures.jsonl` files (and the output's own files) matched by the glob are excluded, so
 *   failure rows are never merged or scored.
 * - Metrics come from the RESOURCES server the row is routed to (`resolveServer`, as for
 *   `/verify`), so a resources-server-only config works; NeMo Gym calls the agent server.
 * - Duplicate keys and rows without both indices are reported with their `file:line` before
 *   anything is written or sent (NeMo Gym: the server's duplicate-key 500, or a sort crash).
 * - The merged file is written atomically with each row's bytes copied verbatim.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { stripForShardAggregation } from '../contract/aggregate-request.js';
import { ConfigError } from '../contract/errors.js';
import { aggregateMetricsPath, sidecarPath } from '../contract/file-names.js';
import { catchAllWarning, computingAggregateMetrics, keyMetricsFor, noShardsMatched, resultPaths } from '../contract/messages.js';
import type { AgentKeyMetrics } from '../contract/run-spec.js';
import { resolveServer } from '../config/routing.js';
import { AggregateGroups, aggregateToMetricsFile, aggregationTargetOf } from '../io/aggregate-metrics-file.js';
import { isFailuresSidecar, matchShardGlobs } from '../io/shard-glob.js';
import { duplicateKeyMessage, findDuplicateKey, readShardRows, sortShardRows, writeMergedRows, type ShardRow } from '../io/shard-rows.js';
import { AggregateMetricsError } from '../verifier/errors.js';
import { VerifierClient } from '../verifier/client.js';
import { routingFromFlags } from './build-spec.js';

/** Where the command prints its lines. */
export interface AggregateCommandIo {
  out: (line: string) => void;
}

const stdoutIo: AggregateCommandIo = { out: (line) => process.stdout.write(line + '\n') };

const AGGREGATE_FLAGS: Record<string, string> = {
  inputGlob: '--input-glob',
  output: '--output',
  configs: '--config',
  servers: '--server',
  merge: '--no-merge',
};

const listFromOne = (v: unknown): unknown => (typeof v === 'string' ? [v] : v);

/** Options of `reverify aggregate`, validated at the CLI boundary. */
export const AggregateOptionsSchema = z.object({
  inputGlob: z.string().trim().min(1).describe('One glob or comma-separated globs of shard JSONL files (`input_glob`).'),
  output: z.string().trim().min(1).describe('Merged JSONL (`output_jsonl_fpath`); the metrics file is `<stem>_aggregate_metrics.json` next to it.'),
  configs: z.preprocess(listFromOne, z.array(z.string())).default([]).describe('NeMo Gym YAML configs (routing, host/port).'),
  servers: z.preprocess(listFromOne, z.array(z.string())).default([]).describe('`NAME=URL` of resources servers.'),
  merge: z.boolean().default(true).describe('Write the merged rows to --output (`merge_shards`); false only aggregates.'),
});

export type AggregateOptions = z.output<typeof AggregateOptionsSchema>;

function parseAggregateOptions(raw: unknown): AggregateOptions {
  const r = AggregateOptionsSchema.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const flag = AGGREGATE_FLAGS[String(issue.path[0] ?? '')] ?? String(issue.path[0] ?? '');
  throw new ConfigError(issue.code === 'too_small' || issue.code === 'invalid_type' ? `${flag} is required` : `${flag}: ${issue.message}`);
}

/** What `reverify aggregate` did. */
export interface AggregateResult {
  /** Shards read, as matched by the glob. */
  shards: string[];
  /** Files the glob matched that were not read (`*_failures.jsonl`, the output's own files). */
  excluded: string[];
  rows: number;
  /** The merged output (absolute), or `null` with `--no-merge`. */
  output: string | null;
  /** The metrics file (absolute), or `null` when no row had an agent name. */
  metricsPath: string | null;
  keyMetrics: AgentKeyMetrics[];
}

/**
 * `reverify aggregate`: glob the shards, read and check every row, merge them sorted by key into
 * `--output` (unless `merge: false`), and aggregate per (agent, resources server) into
 * `<output stem>_aggregate_metrics.json`. User errors are `ConfigError`s (one line, exit 1).
 */
export async function aggregateCommand(raw: unknown, io: AggregateCommandIo = stdoutIo): Promise<AggregateResult> {
  const opts = parseAggregateOptions(raw);
  const output = resolve(opts.output);
  const metricsPath = aggregateMetricsPath(output);
  const ownFiles = new Set([output, sidecarPath(output), metricsPath]);

  const matched = await matchShardGlobs(opts.inputGlob);
  const failures = matched.filter(isFailuresSidecar);
  const own = matched.filter((p) => !isFailuresSidecar(p) && ownFiles.has(resolve(p)));
  const shards = matched.filter((p) => !isFailuresSidecar(p) && !ownFiles.has(resolve(p)));
  if (failures.length > 0) {
    io.out(
      `Excluded ${failures.length} failures sidecar file(s) (*_failures.jsonl) matched by --input-glob: failure rows are never merged or aggregated`,
    );
  }
  if (own.length > 0) io.out(`Excluded the output's own file(s) matched by --input-glob: ${own.join(', ')}`);
  if (shards.length === 0) throw new ConfigError(noShardsMatched(opts.inputGlob));

  const routing = await routingFromFlags(opts.configs, opts.servers);
  if (routing.catchAll !== null) io.out(catchAllWarning(routing.catchAll));

  const rows: ShardRow[] = [];
  const groups = new AggregateGroups();
  let unnamed = 0;
  await readShardRows(shards, (row, place) => {
    rows.push(place);
    const target = aggregationTargetOf(row);
    if (target === null) unnamed++;
    else groups.add(target.agent, resolveServer(routing, target.agent, target.taskSource), place);
  });
  io.out(`Read ${rows.length} row(s) from ${shards.length} shard(s)`);
  if (unnamed > 0) io.out(`${unnamed} row(s) have no agent_ref.name: merged, but not aggregated`);

  sortShardRows(rows);
  const dup = await findDuplicateKey(shards, rows);
  if (dup) throw new ConfigError(duplicateKeyMessage(shards, dup));

  if (opts.merge) {
    await writeMergedRows(output, shards, rows);
    io.out(`Merged ${rows.length} row(s) sorted by key into ${output}`);
  } else {
    io.out(`Not merging (--no-merge): ${output} is not written`);
  }

  io.out(computingAggregateMetrics());
  const client = new VerifierClient({ connectionsPerServer: 4, requestTimeoutMs: 600_000 });
  let agg: { metricsPath: string | null; keyMetrics: AgentKeyMetrics[] };
  try {
    agg = await aggregateToMetricsFile({
      files: shards,
      groups: groups.list(),
      strip: stripForShardAggregation,
      post: (server, body) => client.aggregateMetrics(server, routing.servers[server], body),
      metricsPath,
    });
  } catch (err) {
    if (!(err instanceof AggregateMetricsError)) throw err;
    const merged = opts.merge ? `; the merged rows are in ${output}` : '';
    throw new ConfigError(
      `${err.message}${merged}. Check that the server is running and reachable (--config host/port or --server ${err.serverName}=URL), then run \`reverify aggregate\` again`,
    );
  } finally {
    await client.close();
  }

  for (const { agent, keyMetrics } of agg.keyMetrics) {
    io.out(keyMetricsFor(agent));
    io.out(JSON.stringify(keyMetrics, null, 2));
  }
  const paths = resultPaths(output, agg.metricsPath).split('\n');
  if (!opts.merge) paths[0] = 'Re-verified rollouts: not merged (--no-merge)';
  for (const line of paths) io.out(line);
  return { shards, excluded: [...failures, ...own], rows: rows.length, output: opts.merge ? output : null, ...agg };
}
