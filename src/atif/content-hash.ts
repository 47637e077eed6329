/**
 * A trajectory's content identity, as NeMo Gym 0.7.0 computes it: the SHA-256 of its validated
 * form (every field, absent ones as null) with sorted keys, leaving out what does not change the
 * projected response — the trajectory id and producer metadata in `extra` — except the few
 * extension fields the projection reads (the declared Gym source, Relay's `tool_result`, token
 * details). It names response items when the trajectory has no id, and detects repeated trajectories.
 */
import { createHash } from 'node:crypto';
import { pyJsonDumps } from './py-json.js';
import type { AtifTrajectory } from './schema.js';
import { cloneJson, isJsonObject, type JsonObject, type JsonValue } from './strict-json.js';

/** The step metrics' `extra`, reduced to the token details the usage reads (null when none). */
function retainedMetricsExtra(extra: JsonValue): JsonObject | null {
  if (!isJsonObject(extra)) return null;
  const kept: JsonObject = {};
  if (extra.total_tokens !== undefined && extra.total_tokens !== null) kept.total_tokens = extra.total_tokens;
  let reasoning = extra.reasoning_tokens ?? null;
  for (const name of ['output_tokens_details', 'completion_tokens_details']) {
    const details = extra[name];
    if (reasoning === null && isJsonObject(details)) reasoning = details.reasoning_tokens ?? null;
  }
  if (reasoning !== null) kept.reasoning_tokens = reasoning;
  return Object.keys(kept).length > 0 ? kept : null;
}

/** The canonical form hashed (a copy; the trajectory is not changed). */
function canonical(t: AtifTrajectory): JsonObject {
  const c = cloneJson(t as unknown as JsonObject);
  c.trajectory_id = null;
  delete (c.agent as JsonObject).extra;
  if (isJsonObject(c.extra)) {
    const nemoGym = c.extra.nemo_gym;
    const source = isJsonObject(nemoGym) ? nemoGym.source : undefined;
    c.extra = isJsonObject(source) ? { nemo_gym: { source } } : null;
  }
  if (isJsonObject(c.final_metrics)) delete c.final_metrics.extra;
  for (const step of c.steps as JsonObject[]) {
    delete step.extra;
    for (const call of (step.tool_calls ?? []) as JsonObject[]) delete call.extra;
    const observation = step.observation;
    if (isJsonObject(observation)) {
      for (const r of (observation.results ?? []) as JsonObject[]) {
        const extra = r.extra;
        r.extra = isJsonObject(extra) && 'tool_result' in extra ? { tool_result: extra.tool_result } : null;
      }
    }
    if (isJsonObject(step.metrics)) step.metrics.extra = retainedMetricsExtra(step.metrics.extra);
  }
  return c;
}

/** SHA-256 (hex) of a trajectory's canonical content. */
export function trajectoryContentSha256(t: AtifTrajectory): string {
  return createHash('sha256')
    .update(pyJsonDumps(canonical(t), true), 'utf8')
    .digest('hex');
}

/** What names the trajectory's response items: its id when it has a non-blank one, else its content hash. */
export function identitySeed(t: AtifTrajectory): string {
  return t.trajectory_id !== null && t.trajectory_id.trim() ? t.trajectory_id : `content:${trajectoryContentSha256(t)}`;
}

/** A response item id: `atif_` and 20 hex digits of the SHA-256 of the seed and the components joined by NUL. */
export function itemId(seed: string, ...components: string[]): string {
  return `atif_${createHash('sha256')
    .update([seed, ...components].join('\0'), 'utf8')
    .digest('hex')
    .slice(0, 20)}`;
}
