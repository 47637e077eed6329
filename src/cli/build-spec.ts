import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { maxRolloutAttempts } from '../contract/attempts.js';
import type { RunSpec } from '../contract/run-spec.js';
import { loadGymConfigs } from '../config/gym-config.js';
import { guardServerNames, parseServerFlags, routingFromGymConfig, routingFromServerFlags, type RoutingTable } from '../config/routing.js';
import type { RunOptions } from '../config/run-options.js';

/** Checks that an input file exists and is readable; one line naming the flag otherwise. */
export async function requireReadableFile(flag: string, path: string): Promise<string> {
  const abs = resolve(path);
  try {
    if (!(await stat(abs)).isFile()) throw new ConfigError(`${flag} '${abs}' is not a file`);
    await access(abs, constants.R_OK);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === 'ENOENT' ? `${flag} file not found: '${abs}'` : `${flag} file '${abs}' cannot be read (${code}): check its permissions`,
    );
  }
  return abs;
}

/** Routing from `--config` files and/or `--server NAME=URL` flags (spec §4.2). */
export async function routingFromFlags(configs: string[], servers: string[]): Promise<RoutingTable> {
  const overrides = parseServerFlags(servers);
  if (configs.length > 0) return routingFromGymConfig(await loadGymConfigs(configs.map((c) => resolve(c))), overrides);
  if (servers.length > 0) return routingFromServerFlags(overrides);
  throw new ConfigError('no resources server given: pass --config <gym config.yaml> or --server NAME=URL');
}

/** The attempt cap: `--max-attempts`, else `NEMO_GYM_MAX_ROLLOUT_ATTEMPTS` (spec §1.0), else 3. */
export function attemptCap(opts: RunOptions, env: NodeJS.ProcessEnv): { value: number; warning?: string } {
  return opts.maxAttempts !== undefined ? { value: opts.maxAttempts } : maxRolloutAttempts(env);
}

/** Resolves the run's options into the workflow's spec: absolute paths, routing, guard list. */
export async function buildRunSpec(opts: RunOptions, extra: { heartbeatTimeoutMs: number; maxAttempts: number }): Promise<RunSpec> {
  const inputsPath = await requireReadableFile('--inputs', opts.inputs);
  const rolloutsPath = await requireReadableFile('--rollouts', opts.rollouts);
  const routing = await routingFromFlags(opts.configs, opts.servers);
  return {
    inputsPath,
    rolloutsPath,
    outputPath: resolve(opts.output),
    routing,
    guardServers: guardServerNames(routing).map((name) => ({ name, url: routing.servers[name] })),
    concurrency: opts.concurrency,
    limit: opts.limit ?? null,
    force: opts.force,
    overwrite: opts.overwrite,
    disableAggregation: opts.disableAggregation,
    batchSize: opts.batchSize,
    requestTimeoutMs: opts.requestTimeoutMs,
    heartbeatTimeoutMs: extra.heartbeatTimeoutMs,
    resume: opts.resume,
    judgeFailedOnly: opts.judgeFailedOnly,
    append: opts.append,
    repairTruncated: opts.repairTruncated,
    maxAttempts: extra.maxAttempts,
    rejudge: opts.rejudge,
    rejudgeDelayMs: opts.rejudgeDelayMs,
  };
}
