/**
 * One ATIF trajectory file, read as NeMo Gym 0.7.0 reads it: strict JSON, the v1.7 schema, the
 * supported subset, its SHA-256 against the manifest's pin, and the Gym source it declares against
 * the manifest's key; then its projection and the provenance stamped on its result. Pure: the
 * caller reads the bytes.
 */
import { createHash } from 'node:crypto';
import { pyStrRepr } from '../contract/python-repr.js';
import { isJsonInt, isJsonObject, parseStrictJsonBytes, StrictJsonError } from './strict-json.js';
import { pyRepr } from './py-json.js';
import { AtifTrajectorySchema, schemaProblem, type AtifTrajectory } from './schema.js';
import { AtifProjectionError, checkSupported } from './supported.js';
import { projectTrajectory, type Projection } from './project.js';
import { trajectoryContentSha256 } from './content-hash.js';

/** A trajectory read, checked and projected. */
export interface LoadedTrajectory {
  trajectory: AtifTrajectory;
  /** SHA-256 (hex) of the file's bytes. */
  sourceSha256: string;
  projection: Projection;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Parses and validates a trajectory's bytes (`path` names it in messages) and checks it is supported. */
export function readTrajectory(bytes: Uint8Array, path: string): { trajectory: AtifTrajectory; sourceSha256: string } {
  let trajectory: AtifTrajectory;
  try {
    const value = parseStrictJsonBytes(bytes);
    const r = AtifTrajectorySchema.safeParse(value);
    if (!r.success) throw new StrictJsonError(schemaProblem(r.error, value));
    trajectory = r.data;
  } catch (err) {
    if (err instanceof StrictJsonError) throw new AtifProjectionError(`invalid ATIF trajectory ${path}: ${err.message}`);
    throw err;
  }
  checkSupported(trajectory);
  return { trajectory, sourceSha256: sha256Hex(bytes) };
}

/** The manifest's pin, when it has one, must be the file's SHA-256. */
export function checkPinnedSha256(path: string, expected: string | null, actual: string): void {
  if (expected !== null && expected !== actual) {
    throw new AtifProjectionError(`ATIF source hash mismatch for ${path}: expected ${expected}, got ${actual}`);
  }
}

/** A trajectory may declare its Gym key (`extra.nemo_gym.source.task_index` / `rollout_index`): it must be the manifest's. */
export function checkDeclaredSource(t: AtifTrajectory, key: { task: number; rollout: number }): void {
  const nemoGym = isJsonObject(t.extra) ? t.extra.nemo_gym : undefined;
  const source = isJsonObject(nemoGym) ? nemoGym.source : undefined;
  if (!isJsonObject(source)) return;
  for (const [field, expected] of [
    ['task_index', key.task],
    ['rollout_index', key.rollout],
  ] as const) {
    if (!(field in source)) continue;
    const v = source[field];
    if (!isJsonInt(v) || v < 0) throw new AtifProjectionError(`Gym ATIF source ${field} is invalid: ${pyRepr(v)}`);
    if (BigInt(v) !== BigInt(expected))
      throw new AtifProjectionError(`Gym ATIF source ${field} ${v} conflicts with manifest value ${expected}`);
  }
}

/** Identity of a trajectory for the one-to-one check: its non-blank id, else its content hash. */
export function trajectoryIdentity(t: AtifTrajectory): string {
  const id = (t.trajectory_id ?? '').trim();
  return id ? `('trajectory_id', ${pyStrRepr(id)})` : `('content_sha256', '${trajectoryContentSha256(t)}')`;
}

/** `_ng_atif_provenance`: which trajectory, which bytes, which schema; the projection is complete. */
export function provenanceJson(t: AtifTrajectory, sourceSha256: string): string {
  const s = JSON.stringify;
  return (
    `{"trajectory_id":${t.trajectory_id === null ? 'null' : s(t.trajectory_id)},"session_id":${t.session_id === null ? 'null' : s(t.session_id)},` +
    `"source_sha256":${s(sourceSha256)},"schema_version":${s(t.schema_version)},"projection_status":"complete"}`
  );
}

/** Reads, checks and projects a trajectory (see `readTrajectory`, `projectTrajectory`). */
export function loadTrajectory(bytes: Uint8Array, path: string): LoadedTrajectory {
  const { trajectory, sourceSha256 } = readTrajectory(bytes, path);
  return { trajectory, sourceSha256, projection: projectTrajectory(trajectory) };
}
