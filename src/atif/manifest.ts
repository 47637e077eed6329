/**
 * The ATIF manifest (NeMo Gym 0.7.0's `--atif-manifest`): JSONL, one entry per trajectory, each
 * exactly `{"trajectory_path": <path>, "_ng_task_index": <int >= 0>, "_ng_rollout_index": <int >= 0>,
 * "expected_sha256"?: <64 lowercase hex digits or null>}`; blank lines are skipped; a relative path
 * is relative to the manifest's directory. Pure: the plan streams the lines.
 */
import { isAbsolute, join, dirname } from 'node:path';
import { z } from 'zod';
import { isJsonInt, isJsonObject, parseStrictJson, PyFloat, StrictJsonError } from './strict-json.js';
import { schemaProblem } from './schema.js';
import { AtifProjectionError } from './supported.js';

/** One manifest entry: which trajectory scores which materialized rollout. */
export interface ManifestEntry {
  /** As written in the manifest. */
  trajectoryPath: string;
  task: number;
  rollout: number;
  /** The pinned SHA-256 of the trajectory's bytes, or null (unpinned: only recorded). */
  expectedSha256: string | null;
}

const index = () =>
  z
    .custom<number | bigint>(isJsonInt, { error: 'Input should be a valid integer' })
    .refine((v) => v >= 0, { error: 'Input should be greater than or equal to 0' });

const EntrySchema = z.strictObject(
  {
    trajectory_path: z.string({ error: 'Input is not a valid path' }),
    _ng_task_index: index(),
    _ng_rollout_index: index(),
    expected_sha256: z
      .string({ error: 'Input should be a valid string' })
      .regex(/^[0-9a-f]{64}$/, { error: "String should match pattern '^[0-9a-f]{64}$'" })
      .nullable()
      .default(null),
  },
  { error: 'Input should be a valid dictionary' },
);

/** `invalid ATIF manifest row <n> in <manifest>: <why>` (NeMo Gym's wording; `n` is the line number). */
function rowError(path: string, line: number, detail: string): AtifProjectionError {
  return new AtifProjectionError(`invalid ATIF manifest row ${line} in ${path}: ${detail}`);
}

/** Parses one non-blank manifest line; throws `AtifProjectionError` naming the row. */
export function parseManifestLine(text: string, line: number, manifestPath: string): ManifestEntry {
  let value;
  try {
    value = parseStrictJson(text);
  } catch (err) {
    if (err instanceof StrictJsonError) throw rowError(manifestPath, line, err.message);
    throw err;
  }
  const r = EntrySchema.safeParse(value instanceof PyFloat || !isJsonObject(value) ? [] : value);
  if (!r.success) throw rowError(manifestPath, line, schemaProblem(r.error, value));
  const e = r.data;
  const [task, rollout] = [e._ng_task_index, e._ng_rollout_index].map(Number);
  if (!Number.isSafeInteger(task) || !Number.isSafeInteger(rollout)) {
    throw rowError(manifestPath, line, 'an index beyond 2^53 cannot be keyed exactly by reverify');
  }
  return { trajectoryPath: e.trajectory_path, task, rollout, expectedSha256: e.expected_sha256 };
}

/** Where an entry's trajectory is: its path as written when absolute, else under the manifest's directory. */
export function trajectoryFile(manifestPath: string, trajectoryPath: string): string {
  return isAbsolute(trajectoryPath) ? join(trajectoryPath) : join(dirname(manifestPath), trajectoryPath);
}

/** 0.7.0's warning when entries are not pinned: their hashes are recorded, not compared. */
export function unpinnedWarning(manifestPath: string, unpinned: number, entries: number): string {
  return (
    `WARNING: ATIF manifest ${manifestPath} has ${unpinned} of ${entries} entries without expected_sha256; ` +
    'Gym will record each observed source hash but cannot compare those files with a manifest-pinned digest.'
  );
}

/** 0.7.0's refusal of a manifest without entries. */
export function emptyManifest(manifestPath: string): AtifProjectionError {
  return new AtifProjectionError(`ATIF manifest ${manifestPath} contains no entries`);
}
