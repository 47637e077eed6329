/**
 * The run manifest of a NeMo Gym managed run (`<stem>_manifest.json`, newer NeMo Gym's
 * `RunManifest`): it owns the execution numbers. `next_attempt` maps each logical rollout to the
 * number its next attempt gets, so its latest allocated attempt is one less; the run's results and
 * sidecar hold the outcomes (no dispatch journal). Selection policy `latest_allocated`: a rollout's
 * selected outcome is the saved outcome of its latest allocated attempt. Fields this reader does not
 * use (digests of the source and config, fields of later versions) are kept out of it, not refused.
 */
import { ConfigError } from './errors.js';

export interface RunManifest {
  runId: string | null;
  selectionPolicy: 'latest_allocated';
  /** Logical rollout id → next attempt number (≥ 1). */
  nextAttempt: Map<string, number>;
  /** SHA-256 of the materialized inputs as NeMo Gym digests them; null for a legacy import built here. */
  materializedDigest: string | null;
  legacyImport: boolean;
  identityOverridden: boolean;
  /** The saved timeout policy (absent in the versions that do not save one: false). */
  retryTerminalTimeouts: boolean;
}

function fail(path: string, what: string): never {
  throw new ConfigError(
    `${path}: ${what}; this is not a run manifest reverify can read (schema_version 2, selection_policy latest_allocated): restore it from backup, or read the run with NeMo Gym's RolloutStore.read`,
  );
}

/** Parses and checks a manifest's text; every error is one line naming the file. */
export function parseRunManifest(text: string, path: string): RunManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    fail(path, 'not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(path, 'not a JSON object');
  const m = value as Record<string, unknown>;
  if (m.schema_version !== 2) fail(path, `schema_version ${JSON.stringify(m.schema_version)}`);
  const policy = m.selection_policy ?? 'latest_allocated';
  if (policy !== 'latest_allocated') fail(path, `selection_policy ${JSON.stringify(policy)}`);
  if (typeof m.run_id !== 'string' || m.run_id === '') fail(path, 'run_id missing');
  const next = m.next_attempt ?? {};
  if (next === null || typeof next !== 'object' || Array.isArray(next)) fail(path, 'next_attempt is not an object');
  const nextAttempt = new Map<string, number>();
  for (const [id, n] of Object.entries(next)) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1)
      fail(path, `next_attempt of '${id}' is ${JSON.stringify(n)}, not an integer >= 1`);
    nextAttempt.set(id, n);
  }
  return {
    runId: m.run_id,
    selectionPolicy: 'latest_allocated',
    nextAttempt,
    materializedDigest: typeof m.materialized_digest === 'string' ? m.materialized_digest : null,
    legacyImport: m.legacy_import === true,
    identityOverridden: m.identity_overridden === true,
    retryTerminalTimeouts: m.retry_terminal_timeouts === true,
  };
}

/** The manifest a reader imports in memory for a legacy run (materialized inputs, no manifest): nothing allocated, no run id. */
export function legacyRunManifest(): RunManifest {
  return {
    runId: null,
    selectionPolicy: 'latest_allocated',
    nextAttempt: new Map(),
    materializedDigest: null,
    legacyImport: true,
    identityOverridden: false,
    retryTerminalTimeouts: false,
  };
}
