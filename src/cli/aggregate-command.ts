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
 * - An existing merged output or metrics file is replaced only with --overwrite, and never when
 *   it is a shard or a --config file under another name (src/run-checks/input-aliases.ts).
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { z } from 'zod';
import { stripForShardAggregation } from '../contract/aggregate-request.js';
import { coverageReport } from '../contract/coverage-report.js';
import { ConfigError } from '../contract/errors.js';
import { aggregateMetricsPath, sidecarPath } from '../contract/file-names.js';
import { catchAllWarning, computingAggregateMetrics, keyMetricsFor, noShardsMatched, resultPaths } from '../contract/messages.js';
import type { AgentKeyMetrics } from '../contract/run-spec.js';
import { resolveServer } from '../config/resolve-server.js';
import type { RoutingTable } from '../config/routing.js';
import { AggregateGroups, type SortedGroup } from '../aggregation/aggregate-groups.js';
import { aggregateToMetricsFile, aggregationTargetOf } from '../aggregation/aggregate-metrics-file.js';
import { DuplicateKeyFinder, duplicateKeyMessage } from '../aggregation/duplicate-keys.js';
import { MissingKeys } from '../aggregation/missing-keys.js';
import { withScratchDir } from '../io/scratch-dir.js';
import { isFailuresSidecar, matchShardGlobs } from '../aggregation/shard-glob.js';
import { readShardRows, shardRowSorter, writeMergedRows, type ShardSortOptions } from '../aggregation/shard-rows.js';
import { AggregateMetricsError } from '../verifier/errors.js';
import { managedShardRefused } from '../contract/managed-run.js';
import { managedCompanion, refuseRunTagged } from '../run-checks/managed-runs.js';
import { VerifierClient } from '../verifier/client.js';
import { loadRunConfig } from './build-spec.js';
import { refuseAliases, type ReadFile, type WrittenFile } from '../run-checks/input-aliases.js';

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
  overwrite: '--overwrite',
};

const listFromOne = (v: unknown): unknown => (typeof v === 'string' ? [v] : v);

/** Options of `reverify aggregate`, validated at the CLI boundary (their help is in main.ts, with the flags). */
export const AggregateOptionsSchema = z.object({
  inputGlob: z.string().trim().min(1),
  output: z.string().trim().min(1),
  configs: z.preprocess(listFromOne, z.array(z.string())).default([]),
  servers: z.preprocess(listFromOne, z.array(z.string())).default([]),
  merge: z.boolean().default(true),
  overwrite: z.boolean().default(false),
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
  /** Keys of the excluded failures sidecars that no merged row scores. */
  missing: number;
  /** The merged output (absolute), or `null` with `--no-merge`. */
  output: string | null;
  /** The metrics file (absolute), or `null` when no row had an agent name. */
  metricsPath: string | null;
  keyMetrics: AgentKeyMetrics[];
}

/** Tuning of the command's external sorts (tests force them to spill to disk). */
export interface AggregateCommandLimits {
  /** Records a sort holds in memory before it writes a run file. */
  maxRecords?: number;
}

/**
 * `reverify aggregate`: glob the shards, read and check every row, merge them sorted by key into
 * `--output` (unless `merge: false`), and aggregate per (agent, resources server) into
 * `<output stem>_aggregate_metrics.json`. User errors are `ConfigError`s (one line, exit 1).
 * Memory is flat in the number of rows: rows are sorted (for the merge, the duplicate check and
 * the groups) by external sorts in a hidden scratch directory next to the output (or in the
 * system's temporary directory if the output's directory does not exist yet), removed at the end.
 */
export async function aggregateCommand(
  raw: unknown,
  io: AggregateCommandIo = stdoutIo,
  limits: AggregateCommandLimits = {},
): Promise<AggregateResult> {
  const opts = parseAggregateOptions(raw);
  const output = resolve(opts.output);
  const metricsPath = aggregateMetricsPath(output);
  const ownFiles = new Set([output, sidecarPath(output), metricsPath]);

  const matched = await matchShardGlobs(opts.inputGlob);
  const failures = matched.filter(isFailuresSidecar);
  // With --no-merge the output is only read, never written: when it is all the glob matches, it is
  // the input (the metrics of one run's output, e.g. after its aggregation failed:
  // `-i OUT -o OUT --no-merge`). Matched with other shards, it is an earlier merge and left out.
  const readable = matched.filter((p) => !isFailuresSidecar(p) && resolve(p) !== metricsPath);
  const outputAlone = !opts.merge && readable.length === 1 && resolve(readable[0]) === output;
  if (outputAlone) ownFiles.delete(output);
  const own = matched.filter((p) => !isFailuresSidecar(p) && ownFiles.has(resolve(p)));
  const shards = matched.filter((p) => !isFailuresSidecar(p) && !ownFiles.has(resolve(p)));
  const written: WrittenFile[] = [
    ...(opts.merge ? [{ role: 'merged' as const, what: 'the merged output of this command', path: output }] : []),
    { role: 'metrics', what: 'the aggregate metrics file of this command', path: metricsPath },
  ];
  if (failures.length > 0) {
    io.out(
      `Excluded ${failures.length} failures sidecar file(s) (*_failures.jsonl) matched by --input-glob: failure rows are never merged or aggregated`,
    );
  }
  if (own.length > 0) io.out(`Excluded the output's own file(s) matched by --input-glob: ${own.join(', ')}`);
  if (shards.length === 0) throw new ConfigError(noShardsMatched(opts.inputGlob));
  await refuseClobbering(written, shards, opts);
  // Only selected outcomes are aggregated: a plain run's main rows are all selected; a managed
  // run's are not: its manifest selects them, so a projection (`reverify read`) is aggregated instead.
  for (const shard of shards) {
    const companion = await managedCompanion(shard);
    if (companion !== null) throw new ConfigError(managedShardRefused(shard, companion));
    await refuseRunTagged(shard);
  }

  const { routing } = await loadRunConfig(opts.configs, opts.servers);
  if (routing.catchAll !== null) io.out(catchAllWarning(routing.catchAll));

  const parent = existsSync(dirname(output)) ? dirname(output) : tmpdir();
  return withScratchDir(parent, `.${basename(output)}.aggregate-`, async (dir) => {
    const sort = { dir, maxRecords: limits.maxRecords };
    const missing = failures.length > 0 ? new MissingKeys(sort) : null;
    const { rows, groups } = await readAndMerge({ merge: opts.merge, output, shards, routing, sort, io, missing });
    for (const sidecar of failures) await missing?.sidecar(sidecar);
    const missingKeys = (await missing?.count()) ?? 0;
    io.out(computingAggregateMetrics());
    const agg = await aggregateGroups({ merge: opts.merge, output, shards, routing, groups, metricsPath, scratchDir: dir });
    for (const { agent, keyMetrics } of agg.keyMetrics) {
      io.out(keyMetricsFor(agent));
      io.out(JSON.stringify(keyMetrics, null, 2));
    }
    const paths = resultPaths(output, agg.metricsPath).split('\n');
    if (!opts.merge) paths[0] = 'Re-verified rollouts: not merged (--no-merge)';
    for (const line of paths) io.out(line);
    // As NeMo Gym 0.7.0 reports a run's coverage: keys of the excluded sidecars that no merged row scores.
    coverageReport(rows, missingKeys, null, failures.join(', ')).forEach((line) => io.out(line));
    return { shards, excluded: [...failures, ...own], rows, missing: missingKeys, output: opts.merge ? output : null, ...agg };
  });
}

/**
 * Nothing is replaced without --overwrite, and no shard or --config file ever (under any name):
 * one line, before anything is read, sent or written.
 */
async function refuseClobbering(written: WrittenFile[], shards: string[], opts: AggregateOptions): Promise<void> {
  const reads: ReadFile[] = [
    ...shards.map((p) => ({ role: 'shard' as const, flag: '--input-glob', path: resolve(p) })),
    ...opts.configs.map((c) => ({ role: 'config' as const, flag: '--config', path: resolve(c) })),
  ];
  await refuseAliases(written, reads, { overwrite: opts.overwrite, resume: false, append: false });
  if (!opts.overwrite) {
    for (const w of written) {
      if (existsSync(w.path))
        throw new ConfigError(`'${w.path}' already exists: pass --overwrite to replace it, or choose another --output`);
    }
  }
}

/**
 * Reads and checks every shard row, refuses duplicate keys, and writes the merged file (unless
 * `merge` is false). Returns the row count and the groups, sorted, for aggregation.
 */
async function readAndMerge(a: {
  merge: boolean;
  output: string;
  shards: string[];
  routing: RoutingTable;
  sort: ShardSortOptions;
  io: AggregateCommandIo;
  /** Counts the merged keys for the coverage report. */
  missing: MissingKeys | null;
}): Promise<{ rows: number; groups: SortedGroup[] }> {
  const mergeSort = a.merge ? shardRowSorter(a.sort) : null;
  const duplicates = new DuplicateKeyFinder(a.sort);
  const groups = new AggregateGroups(a.sort);
  let rows = 0;
  let unnamed = 0;
  try {
    await readShardRows(a.shards, async (row, place) => {
      rows++;
      await duplicates.add(place);
      await a.missing?.scored(place.id);
      await mergeSort?.add(place);
      const target = aggregationTargetOf(row);
      if (target === null) unnamed++;
      else await groups.add(target, resolveServer(a.routing, target.route), place);
    });
    a.io.out(`Read ${rows} row(s) from ${a.shards.length} shard(s)`);
    if (unnamed > 0) a.io.out(`${unnamed} row(s) have no agent_ref.name and no _ng_environment_server: merged, but not aggregated`);

    const dup = await duplicates.find();
    if (dup) throw new ConfigError(duplicateKeyMessage(a.shards, dup));

    if (mergeSort) {
      await writeMergedRows(a.output, a.shards, mergeSort.sorted());
      a.io.out(`Merged ${rows} row(s) sorted by key into ${a.output}`);
    } else {
      a.io.out(`Not merging (--no-merge): ${a.output} is not written`);
    }
  } finally {
    await mergeSort?.dispose();
  }
  return { rows, groups: await groups.sorted() };
}

/** POSTs each group to its resources server and writes the metrics file; a failed POST is a `ConfigError`. */
async function aggregateGroups(a: {
  merge: boolean;
  output: string;
  shards: string[];
  routing: RoutingTable;
  groups: SortedGroup[];
  metricsPath: string;
  scratchDir: string;
}): Promise<{ metricsPath: string | null; keyMetrics: AgentKeyMetrics[] }> {
  const client = new VerifierClient({ connectionsPerServer: 4, requestTimeoutMs: 600_000 });
  try {
    return await aggregateToMetricsFile({
      files: a.shards,
      groups: a.groups,
      strip: stripForShardAggregation,
      post: (server, bodyPath, replyPath, signal) =>
        client.aggregateMetrics(server, a.routing.servers[server], bodyPath, replyPath, signal),
      metricsPath: a.metricsPath,
      scratchDir: a.scratchDir,
    });
  } catch (err) {
    if (!(err instanceof AggregateMetricsError)) throw err;
    const merged = a.merge ? `; the merged rows are in ${a.output}` : '';
    const fix =
      err.status === undefined
        ? `Check that the server is running and reachable (--config host/port or --server ${err.serverName}=URL)`
        : 'Fix the server (see its log)';
    throw new ConfigError(`${err.message}${merged}. ${fix}, then run \`reverify aggregate\` again`);
  } finally {
    await client.close();
  }
}
