/**
 * Every user-facing text of the spec, reproduced character for character (quotes, punctuation,
 * Python-style lists). Where ours deliberately differs from NeMo Gym, the function says so.
 */
import { compareCodePoints, formatKey, type RowKey } from './row-key.js';
import { pyStrRepr, pythonRepr } from './python-repr.js';

export { pythonRepr, pythonReprJson, pyFloatRepr, pyStrRepr } from './python-repr.js';
// The texts of runs that reuse outputs (recovery, resume, the attempt cap), in their own file.
export * from './resume-messages.js';

function sortedNames(names: readonly string[]): string[] {
  return [...names].sort(compareCodePoints);
}

/** §4.3: the guard's refusal without `--force`. `names` are sorted (as NeMo Gym does). */
export function guardError(names: readonly string[]): string {
  return (
    `Resource server(s) ${pythonRepr(sortedNames(names))} have reverify_mode=UNSUPPORTED or UNKNOWN. ` +
    'Rewards computed by reverification may be incorrect. ' +
    "Pass ++force=true to override (output will be prefixed with 'unsafe_')."
  );
}

/** §4.3: the `--force` warning, printed at the start and again at the very end. */
export function guardWarning(names: readonly string[]): string {
  return (
    `WARNING: resource server(s) ${pythonRepr(sortedNames(names))} have reverify_mode=UNSUPPORTED or UNKNOWN. ` +
    'Rewards computed by reverification may be incorrect. ' +
    "Output is prefixed with 'unsafe_'."
  );
}

/** §4.4: an output (or its sidecar) exists and neither `--overwrite` nor `--resume` was given. */
export function outputExists(path: string): string {
  return `Output file already exists: '${path}'. Pass --overwrite to delete it and start fresh, ` + 'or --resume to continue from it.';
}

/** §4.4: printed for each existing output file deleted by `--overwrite`. */
export function deletedExistingOutput(path: string): string {
  return `Deleted existing output file: '${path}'`;
}

/** §4.2: a config with neither agent blocks naming a resources server nor a resources server. */
export function noResourcesServer(): string {
  return 'reverify: no resources server found in the config.';
}

/** §4.2: several resources servers and no agent blocks (`names` in config order). */
export function multipleResourcesServers(names: readonly string[]): string {
  return (
    `reverify: multiple resources servers ${pythonRepr([...names])} and no agent blocks to ` + 'route by. Use a config with agent blocks.'
  );
}

/**
 * §4.2(c), newer NeMo Gym: the loud warning when a resources-only config routes every agent name
 * to its single resources server.
 */
export function catchAllWarning(name: string): string {
  return (
    'reverify: config has no agent blocks; routing EVERY rollout agent name to the only ' +
    `resources server ${pyStrRepr(name)}. Mismatched or stale agent names cannot be detected in ` +
    'this mode.'
  );
}

/**
 * Ours: resources servers the routing can reach but has no address for (NeMo Gym starts every
 * server itself; we connect to running ones).
 */
export function noServerUrl(names: readonly string[]): string {
  const first = names[0] ?? 'NAME';
  return (
    `reverify: no URL for resources server(s) ${pythonRepr([...names])}: add host and port to its ` +
    `implementation in the config, or pass --server ${first}=http://HOST:PORT` +
    (names.length > 1 ? ' for each' : '')
  );
}

/**
 * §4.2(b), newer NeMo Gym: no route for a row. `agentName`/`taskSource` print as Python reprs
 * (`None` when absent); the known agents are sorted.
 */
export function unknownAgent(agentName: string | undefined, taskSource: string | undefined, knownAgents: readonly string[]): string {
  return (
    `reverify: cannot find a resources server for row (agent_ref.name=${pythonRepr(agentName)}, ` +
    `task_source=${pythonRepr(taskSource)}). Known agents: ${pythonRepr(sortedNames(knownAgents))}.`
  );
}

/**
 * §4.7.2: a source row whose key is not in the materialized inputs. Ours keeps the spec's sentence
 * but says where (`<rollouts file>:<line>:`), prints the key instead of the whole row (rows can be
 * megabytes), and tells what to check. `key` may come formatted already (`formatLineKey`: exact digits).
 */
export function noMatchingInput(rolloutsPath: string, line: number, key: RowKey | string, inputsPath?: string): string {
  const inInputs = inputsPath === undefined ? '' : ` in ${inputsPath}`;
  return (
    `${rolloutsPath}:${line}: No matching materialized input row found for rollout row ${typeof key === 'string' ? key : formatKey(key)}${inInputs}; ` +
    'check that --inputs is the materialized inputs file of the run that produced --rollouts'
  );
}

/**
 * NeMo Gym 0.7.0, a materialized task row whose `task_input.task_data` is not an object. Ours adds
 * where (`<inputs>:<line>: `, by the caller) and what to do.
 */
export function taskDataNotObject(): string {
  return 'reverify: task_input.task_data must be an object; fix this row of --inputs';
}

/** NeMo Gym 0.7.0: a task field given twice in `task_input`, inside and outside `task_data`, with different values. */
export function conflictingTaskField(key: string): string {
  return `reverify: conflicting task field ${pyStrRepr(key)} inside and outside task_data; keep one value in this row of --inputs`;
}

/** §4.0: `--append` without `--judge-failed-only`. */
export function appendNeedsJudgeFailedOnly(): string {
  return '`append` is only valid together with `judge_failed_only` (pass --judge-failed-only).';
}

/** §4.0: `--append` with `--overwrite`. */
export function appendAndOverwrite(): string {
  return '`append` and `overwrite` are mutually exclusive: one appends, the other clears.';
}

/**
 * §4.0: a count option below 1. NeMo Gym shows pydantic's "Input should be greater than or equal
 * to 1"; ours names the flag and the value given.
 */
export function greaterOrEqualOne(flag: string, got?: unknown): string {
  const given = got === undefined ? '' : ` (got ${typeof got === 'string' ? got : JSON.stringify(got)})`;
  return `${flag}: Input should be greater than or equal to 1${given}`;
}

/**
 * §4.13: `--disable-aggregation`. Adapted: NeMo Gym says `gym eval aggregate`; our command for
 * aggregating shards is `reverify aggregate`.
 */
export function disableAggregationNotice(): string {
  return (
    'Skipping aggregate-metrics computation because disable_aggregation=True. ' +
    'Run `reverify aggregate` after all shards finish to compute the global metrics.'
  );
}

/** Ours: printed when the plan phase starts; it reads every line (about half a minute per million rows). */
export function planning(): string {
  return 'Planning: checking every line of the inputs and rollouts and joining them by key';
}

/** §4.9: printed when a concurrency bound is set. */
export function verifyingWith(n: number): string {
  return `Verifying with ${n} concurrent requests`;
}

/** §4.13: printed before aggregation. */
export function computingAggregateMetrics(): string {
  return 'Computing aggregate metrics';
}

/** §4.13.4: header printed before an agent's key metrics JSON. */
export function keyMetricsFor(agent: string): string {
  return `Key metrics for ${agent}:`;
}

/** §4.14: the result lines; `metricsPath` null prints `None`. */
export function resultPaths(outputPath: string, metricsPath: string | null): string {
  return `Re-verified rollouts: ${outputPath}\nAggregate metrics: ${metricsPath ?? 'None'}`;
}

/**
 * §1.0: the attempt-cap warning (Python: `WARNING: could not parse NEMO_GYM_MAX_ROLLOUT_ATTEMPTS=<repr>
 * (<reason>); falling back to default 3.`).
 */
export function maxAttemptsWarning(raw: string, reason: string, fallback = 3): string {
  return `WARNING: could not parse NEMO_GYM_MAX_ROLLOUT_ATTEMPTS=${pyStrRepr(raw)} (${reason}); falling back to default ${fallback}.`;
}

/** §4.15: no file matched the shard globs (`glob` printed as a Python repr). */
export function noShardsMatched(glob: string): string {
  return `No shards matched input_glob=${pyStrRepr(glob)}`;
}

/** §4.15: a malformed shard line (1-based line number). */
export function malformedShard(path: string, line: number, detail: string): string {
  return `Malformed JSON in '${path}' at line ${line}: ${detail}`;
}
