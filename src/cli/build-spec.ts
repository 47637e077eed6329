import { UNSAFE_PREFIX } from '../contract/keys.js';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { refuseOverlongNames } from '../contract/name-limits.js';
import { maxRolloutAttempts } from '../contract/attempts.js';
import type { AtifSpec, RunSpec } from '../contract/run-spec.js';
import { mcpExposure } from '../config/mcp-exposure.js';
import { loadGymConfigs, type GymConfig } from '../config/gym-config.js';
import { guardServerNames, parseServerFlags, routingFromGymConfig, routingFromServerFlags, type RoutingTable } from '../config/routing.js';
import type { RunOptions } from '../config/run-options.js';
import { parseServerAuth, rememberCredentials, SERVER_AUTH_ENV, splitCredentials } from '../verifier/credentials.js';
import { refuseInputAliases } from '../run-checks/input-aliases.js';
import { outputPathsFor } from '../contract/output-paths.js';
import { RUN_FLAG_LIST } from '../config/run-flags.js';
import { newOrderSeed } from '../planning/task-order.js';
import type { UploadSpec } from '../contract/run-spec.js';
import { uploadConfigOf } from '../upload/upload-config.js';
import { rejudgeSavedKeys } from './rejudge-saved-keys.js';

/** The run's options under NeMo Gym's config keys, for the exported config of every tracker. */
export function exportedRunOptions(opts: RunOptions, uploadRollouts: boolean): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const f of RUN_FLAG_LIST) {
    const given = f.gymKey && f.key ? (opts as Record<string, unknown>)[f.key] : undefined;
    const value = f.kind === 'policy' ? (given ?? false) : given;
    if (f.gymKey && value !== undefined) options[f.gymKey] = value;
  }
  options.upload_rollouts = uploadRollouts;
  return options;
}

/**
 * The upload part of the spec (spec §4.12): set when the `--config` files configure MLflow or W&B
 * and `--no-upload` is not given. Only the config paths go in (the activities read the token and
 * the W&B key themselves), with which trackers to log to and the run's options under NeMo Gym's
 * config keys for the exported config.
 */
export function uploadSpecOf(opts: RunOptions, gymConfig: GymConfig | null): UploadSpec | null {
  if (!opts.upload || gymConfig === null) return null;
  const config = uploadConfigOf(gymConfig);
  if (config.mlflow === null && config.wandb === null) return null;
  const options = exportedRunOptions(opts, config.uploadRollouts);
  return {
    configs: opts.configs.map((c) => resolve(c)),
    uploadRollouts: config.uploadRollouts,
    options,
    ...(config.mlflow === null ? { mlflow: false } : {}),
    ...(config.wandb === null ? {} : { wandb: true }),
  };
}

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

/** A command's configuration: its `--config` files, read and merged once (null: none), and the routing. */
export interface RunConfig {
  config: GymConfig | null;
  routing: RoutingTable;
}

/**
 * Reads the `--config` files once (the one read of a command: the loaded config is passed on, to
 * the routing, the upload spec, the ATIF exposure; never into the spec, as it may hold secrets) and
 * makes the routing from them and/or `--server NAME=URL` flags (spec §4.2), its URLs without user
 * and password: those are kept for this process's requests (`credentials.ts`), or refused when no
 * worker of this process will make them (`--no-worker`).
 */
export async function loadRunConfig(configs: string[], servers: string[], urlCredentials: 'keep' | 'refuse' = 'keep'): Promise<RunConfig> {
  parseServerAuth(process.env[SERVER_AUTH_ENV] ?? ''); // a malformed value stops here, not at the first request
  const overrides = parseServerFlags(servers);
  const config = configs.length > 0 ? await loadGymConfigs(configs.map((c) => resolve(c))) : null;
  let routing: RoutingTable;
  if (config !== null) routing = routingFromGymConfig(config, overrides);
  else if (servers.length > 0) routing = routingFromServerFlags(overrides);
  else throw new ConfigError('no resources server given: pass --config <gym config.yaml> or --server NAME=URL');
  for (const [name, given] of Object.entries(routing.servers)) {
    const { url, authorization } = splitCredentials(given, `resources server '${name}'`);
    routing.servers[name] = url;
    if (authorization === null) continue;
    if (urlCredentials === 'refuse') {
      throw new ConfigError(
        `resources server '${name}': a user and password in its URL reach only a worker in this process, and this run has --no-worker: ` +
          `give them to every \`reverify worker\` as ${SERVER_AUTH_ENV}='${url.replace('://', '://USER:PASSWORD@')}' and use the URL without them`,
      );
    }
    rememberCredentials(url, authorization);
  }
  return { config, routing };
}

/** The attempt cap: `--max-attempts`, else `NEMO_GYM_MAX_ROLLOUT_ATTEMPTS` (spec §1.0), else 3. */
export function attemptCap(opts: RunOptions, env: NodeJS.ProcessEnv): { value: number; warning?: string } {
  return opts.maxAttempts !== undefined ? { value: opts.maxAttempts } : maxRolloutAttempts(env);
}

/** The prefixes the guard may give the output: with --force either one, so both are checked. */
function possiblePrefixes(opts: RunOptions): string[] {
  return opts.force && !opts.judgeFailedOnly ? ['', UNSAFE_PREFIX] : [''];
}

/**
 * A `--config` file must not be a file the run writes (the data files are checked by the prepare
 * phase, once the guard has chosen the output's prefix; configs are read only here).
 */
async function refuseConfigAliases(opts: RunOptions, outputPath: string): Promise<void> {
  await refuseInputAliases(
    possiblePrefixes(opts).map((p) => outputPathsFor(outputPath, p)),
    opts.configs.map((c) => ({ role: 'config' as const, flag: '--config', path: resolve(c) })),
    opts,
  );
}

/** The ATIF part of the spec: the manifest, and each server's MCP exposure as the config says it. */
function atifSpec(config: GymConfig | null, manifestPath: string, routing: RoutingTable): AtifSpec {
  const names = Object.keys(routing.servers);
  return { manifestPath, mcpExposure: Object.fromEntries(names.map((name) => [name, mcpExposure(config, name)])) };
}

/** What the spec needs besides the run's options. */
export interface SpecExtras {
  heartbeatTimeoutMs: number;
  maxAttempts: number;
  /** False with --no-worker. Default true. */
  worker?: boolean;
}

/** Resolves the run's options into the workflow's spec: absolute paths, routing, guard list. */
export async function buildRunSpec(opts: RunOptions, extra: SpecExtras): Promise<RunSpec> {
  return (await buildRun(opts, extra)).spec;
}

/** The run's spec, and its `--config` as read for it (the command's one read; see `loadRunConfig`). */
export async function buildRun(opts: RunOptions, extra: SpecExtras): Promise<{ spec: RunSpec; config: GymConfig | null }> {
  const inputsPath = await requireReadableFile('--inputs', opts.inputs);
  const atif = opts.inputFormat === 'atif';
  const rolloutsPath = atif ? '' : await requireReadableFile('--rollouts', opts.rollouts!);
  const manifestPath = atif ? await requireReadableFile('--atif-manifest', opts.atifManifest!) : null;
  const outputPath = resolve(opts.output);
  // Before anything is written or started: a name made from --output over the file system's limits.
  for (const prefix of possiblePrefixes(opts)) refuseOverlongNames(outputPath, prefix);
  await refuseConfigAliases(opts, outputPath);
  const { config, routing } = await loadRunConfig(opts.configs, opts.servers, extra.worker === false ? 'refuse' : 'keep');
  const upload = uploadSpecOf(opts, config);
  // One seed for the order and the noise sample: printed and saved with the run.
  const seed = opts.orderSeed ?? newOrderSeed();
  const spec: RunSpec = {
    ...(upload === null ? {} : { upload }),
    inputsPath,
    rolloutsPath,
    ...(manifestPath === null ? {} : { atif: atifSpec(config, manifestPath, routing) }),
    outputPath,
    routing,
    guardServers: guardServerNames(routing).map((name) => ({ name, url: routing.servers[name] })),
    concurrency: opts.concurrency,
    limit: opts.limit ?? null,
    ...(opts.order === 'random' ? { order: opts.order, orderSeed: seed } : {}),
    ...(opts.noiseSample ? { noiseSample: { rows: opts.noiseSample, seed } } : {}),
    ...(opts.rejudgeSaved !== undefined ? { rejudgeSaved: { keys: await rejudgeSavedKeys(opts.rejudgeSaved) } } : {}),
    force: opts.force,
    overwrite: opts.overwrite,
    disableAggregation: opts.disableAggregation,
    batchSize: opts.batchSize,
    ...(opts.maxRequests !== undefined ? { maxRequests: opts.maxRequests } : {}),
    confidence: opts.confidence,
    ...(opts.stopWhen.length > 0 ? { stopWhen: opts.stopWhen } : {}),
    requestTimeoutMs: opts.requestTimeoutMs,
    heartbeatTimeoutMs: extra.heartbeatTimeoutMs,
    resume: opts.resume,
    judgeFailedOnly: opts.judgeFailedOnly,
    append: opts.append,
    repairTruncated: opts.repairTruncated,
    ...(opts.allowUnsafe ? { allowUnsafe: true } : {}),
    maxAttempts: extra.maxAttempts,
    rejudge: opts.rejudge,
    rejudgeDelayMs: opts.rejudgeDelayMs,
    retryInvalidJudgeResponses: opts.retryInvalidJudgeResponses,
    // Absent flags are off here; a resume keeps the saved policies (attempt-cap.ts, saved-policy.ts).
    retryTerminalTimeouts: opts.retryTerminalTimeouts === true,
    ...(opts.dispatchLongestFirst === true ? { dispatchLongestFirst: true } : {}),
  };
  return { spec, config };
}
