/**
 * The boundary checks on parsed input rows (spec §1.3, §1.4, §7 "Missing keys"): only what reverify
 * itself reads. NeMo Gym crashes with a traceback on these; we stop before any request with
 * `file:line: <reason>` (the caller adds the location).
 */
import { z } from 'zod';
import { topLevelSpans } from './json-spans.js';
import { AGENT_REF_KEY, ENVIRONMENT_SERVER_KEY, RESPONSE_KEY, ROLLOUT_INDEX_KEY, TASK_INDEX_KEY } from './keys.js';

/**
 * A row index: a JSON integer (`3` or `3.0`) within ±2^53. Larger ones are refused because
 * `JSON.parse` has already rounded them and two distinct keys could collide.
 */
export const RowIndexSchema = z.int();

/** A materialized inputs row: both indices and `agent_ref.name`; every other field passes through. */
export const InputRowSchema = z.looseObject({
  [TASK_INDEX_KEY]: RowIndexSchema,
  [ROLLOUT_INDEX_KEY]: RowIndexSchema,
  [AGENT_REF_KEY]: z.looseObject({ name: z.string() }),
});

/**
 * A materialized inputs row stamped with its environment server (NeMo Gym 0.7.0; a materialized
 * task row names no agent): `agent_ref` may be absent, and its `name` too.
 */
export const EnvironmentInputRowSchema = z.looseObject({
  [TASK_INDEX_KEY]: RowIndexSchema,
  [ROLLOUT_INDEX_KEY]: RowIndexSchema,
  [AGENT_REF_KEY]: z.looseObject({ name: z.string().optional() }).optional(),
});

/** A rollouts (or recovery-sidecar) row: both indices and an object `response`. */
export const RolloutRowSchema = z.looseObject({
  [TASK_INDEX_KEY]: RowIndexSchema,
  [ROLLOUT_INDEX_KEY]: RowIndexSchema,
  [RESPONSE_KEY]: z.looseObject({}),
});

const EXPECTED: Record<string, string> = {
  [TASK_INDEX_KEY]: 'an integer',
  [ROLLOUT_INDEX_KEY]: 'an integer',
  [AGENT_REF_KEY]: 'an object like {"name": "<agent name>"}',
  [`${AGENT_REF_KEY}.name`]: 'a string (the agent name)',
  [RESPONSE_KEY]: 'a JSON object (the Responses API response)',
};

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

function preview(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function valueAt(row: unknown, path: PropertyKey[]): unknown {
  let v: unknown = row;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True when the row is stamped with an environment server (a string `_ng_environment_server`). */
function hasEnvironmentServer(row: unknown): boolean {
  return isPlainObject(row) && typeof row[ENVIRONMENT_SERVER_KEY] === 'string';
}

/** Fast acceptance equal to `InputRowSchema` (or with an environment server `EnvironmentInputRowSchema`) for parsed JSON (zod copies objects; this runs per row). */
function inputRowOk(row: unknown): boolean {
  if (!isPlainObject(row)) return false;
  const ref = row[AGENT_REF_KEY];
  const refOk = hasEnvironmentServer(row)
    ? ref === undefined || (isPlainObject(ref) && (ref.name === undefined || typeof ref.name === 'string'))
    : isPlainObject(ref) && typeof ref.name === 'string';
  return Number.isSafeInteger(row[TASK_INDEX_KEY]) && Number.isSafeInteger(row[ROLLOUT_INDEX_KEY]) && refOk;
}

/** Fast acceptance equal to `RolloutRowSchema` for parsed JSON. */
function rolloutRowOk(row: unknown): boolean {
  return (
    isPlainObject(row) &&
    Number.isSafeInteger(row[TASK_INDEX_KEY]) &&
    Number.isSafeInteger(row[ROLLOUT_INDEX_KEY]) &&
    isPlainObject(row[RESPONSE_KEY])
  );
}

/** The raw text of top-level member `path` of the row's line (exact digits), else the parsed value's preview. */
function shown(value: unknown, path: PropertyKey[], text: string | undefined): string {
  const span = text !== undefined && path.length === 1 ? topLevelSpans(text).get(String(path[0])) : undefined;
  return span ? text!.slice(span.start, span.end) : preview(value);
}

function describe(schema: z.ZodType, row: unknown, what: string, needs: string, text?: string): string | null {
  const r = schema.safeParse(row);
  if (r.success) return null;
  const issue = r.error.issues[0];
  if (issue.path.length === 0) return `${what} is not a JSON object (got ${typeName(row)})`;
  const path = issue.path.map(String).join('.');
  const value = valueAt(row, issue.path);
  if (value === undefined) return `${what} has no "${path}" (${needs})`;
  if (issue.code === 'too_big' || issue.code === 'too_small') {
    return `"${path}" is ${shown(value, issue.path, text)}, beyond the exact integer range of ±2^53, which reverify cannot key exactly`;
  }
  const kind = value === null ? '' : ` (${typeName(value)})`;
  return `"${path}" must be ${EXPECTED[path] ?? 'valid'}, got ${preview(value)}${kind}`;
}

/**
 * Why a parsed materialized-inputs row cannot be used, as one line, or `null` if it can: it needs
 * integer `_ng_task_index` and `_ng_rollout_index` and a string `agent_ref.name` (a row stamped
 * with a string `_ng_environment_server` may lack `agent_ref` or its name: its run is named by the
 * stamp). With the row's line `text`, an index beyond ±2^53 is shown with its exact digits.
 */
export function describeInputRowProblem(row: unknown, text?: string): string | null {
  if (inputRowOk(row)) return null;
  return describe(
    hasEnvironmentServer(row) ? EnvironmentInputRowSchema : InputRowSchema,
    row,
    'materialized input row',
    'each row of --inputs needs _ng_task_index, _ng_rollout_index and agent_ref.name',
    text,
  );
}

/**
 * Why a parsed rollouts row cannot be re-verified, as one line, or `null` if it can: it needs both
 * integer indices and an object `response`. With the row's line `text`, an index beyond ±2^53 is
 * shown with its exact digits.
 */
export function describeRolloutRowProblem(row: unknown, text?: string): string | null {
  if (rolloutRowOk(row)) return null;
  return describe(RolloutRowSchema, row, 'rollout row', 'each row to re-verify needs _ng_task_index, _ng_rollout_index and response', text);
}
