/**
 * The `usage` of a projected response (NeMo Gym 0.7.0's rules): per-step token counts must be
 * complete and add up to `final_metrics`, or only the final totals are reported; optional Relay
 * details (`metrics.extra.reasoning_tokens`, `total_tokens`, `*_tokens_details`) add up only when
 * every model step reports them. Anything inconsistent is refused rather than guessed.
 */
import { isJsonInt, isJsonObject, type JsonObject } from './strict-json.js';
import type { AtifStep, AtifTrajectory } from './schema.js';
import { AtifProjectionError } from './supported.js';

export interface Usage {
  input_tokens: number;
  cached_tokens: number | null;
  output_tokens: number;
  reasoning_tokens: number | null;
  total_tokens: number;
}

type Metrics = NonNullable<AtifStep['metrics']>;
const n = (v: number | bigint | null): number | null => (v === null ? null : Number(v));
const fail = (message: string): never => {
  throw new AtifProjectionError(message);
};

/** A count in a Relay extension object: absent or null -> null; else a non-negative JSON integer. */
function optionalCount(ns: JsonObject, field: string, stepId: number | bigint): number | null {
  const v = ns[field];
  if (v === undefined || v === null) return null;
  if (!isJsonInt(v) || v < 0) fail(`step ${stepId} ATIF ${field} metadata is not a non-negative integer`);
  return Number(v);
}

function extraOf(m: Metrics | null): JsonObject {
  return m !== null && isJsonObject(m.extra) ? m.extra : {};
}

function stepHasUsage(step: AtifStep): boolean {
  const m = step.metrics;
  if (m === null) return false;
  if (m.prompt_tokens !== null || m.completion_tokens !== null || m.cached_tokens !== null) return true;
  if (!isJsonObject(m.extra)) return false;
  const e = m.extra;
  if ((e.reasoning_tokens ?? null) !== null || (e.total_tokens ?? null) !== null) return true;
  return [e.output_tokens_details, e.completion_tokens_details].some((d) => isJsonObject(d) && (d.reasoning_tokens ?? null) !== null);
}

/** One step's Relay reasoning and total token counts (null when it has none), checked against its own counts. */
function stepDetails(step: AtifStep): { reasoning: number | null; total: number | null } {
  const m = step.metrics;
  const extra = extraOf(m);
  const nested: number[] = [];
  for (const name of ['output_tokens_details', 'completion_tokens_details']) {
    const details = extra[name];
    if (name in extra && details !== null && !isJsonObject(details)) fail(`step ${step.step_id} metrics.extra.${name} is not an object`);
    if (isJsonObject(details)) {
      const v = optionalCount(details, 'reasoning_tokens', step.step_id);
      if (v !== null) nested.push(v);
    }
  }
  if (new Set(nested).size > 1) fail(`step ${step.step_id} ATIF reasoning_tokens metadata conflicts between nested token-detail fields`);
  const top = optionalCount(extra, 'reasoning_tokens', step.step_id);
  if (nested.length > 0 && top !== null && nested[0] !== top) {
    fail(
      `step ${step.step_id} ATIF reasoning_tokens metadata conflicts between metrics.extra.reasoning_tokens and a nested token-detail field`,
    );
  }
  const reasoning = nested.length > 0 ? nested[0] : top;
  const total = optionalCount(extra, 'total_tokens', step.step_id);
  if (m !== null) {
    const known = (n(m.prompt_tokens) ?? 0) + (n(m.completion_tokens) ?? 0);
    if (total !== null && total < known)
      fail(`step ${step.step_id} ATIF total_tokens metadata is smaller than prompt_tokens + completion_tokens`);
    const completion = n(m.completion_tokens);
    if (reasoning !== null && completion !== null && reasoning > completion) {
      fail(`step ${step.step_id} ATIF reasoning_tokens metadata exceeds completion_tokens`);
    }
  }
  return { reasoning, total };
}

/** A sum only when every value is known. */
function sumIfAll(values: Array<number | null>): number | null {
  return values.length > 0 && values.every((v) => v !== null) ? values.reduce<number>((a, b) => a + (b ?? 0), 0) : null;
}

/** The response's usage, or null when the trajectory reports none; refuses inconsistent counts. */
export function usageOf(t: AtifTrajectory): Usage | null {
  const steps = t.steps.filter((s) => s.source === 'agent' && s.llm_call_count !== 0);
  for (const s of steps) {
    const m = s.metrics;
    if (m && m.prompt_tokens !== null && m.cached_tokens !== null && m.cached_tokens > m.prompt_tokens) {
      fail(`step ${s.step_id} cached_tokens exceeds prompt_tokens; cached tokens must be a subset`);
    }
  }
  const hasStepUsage = steps.some(stepHasUsage);
  const complete =
    steps.length > 0 && steps.every((s) => s.metrics && s.metrics.prompt_tokens !== null && s.metrics.completion_tokens !== null);
  const details = steps.map(stepDetails);
  const reasoning = sumIfAll(details.map((d) => d.reasoning));
  const reported = sumIfAll(details.map((d) => d.total));
  if (hasStepUsage && !complete) {
    fail('ATIF contains partial per-model-step token metrics; every model step must provide both prompt_tokens and completion_tokens');
  }
  const fm = t.final_metrics;
  if (fm === null) return hasStepUsage ? fail('ATIF contains per-step token metrics without final_metrics') : null;
  const [totalPrompt, totalCompletion, totalCached] = [n(fm.total_prompt_tokens), n(fm.total_completion_tokens), n(fm.total_cached_tokens)];
  if (totalPrompt !== null && totalCached !== null && totalCached > totalPrompt) {
    fail('ATIF final total_cached_tokens exceeds total_prompt_tokens; cached tokens must be a subset');
  }
  if (totalPrompt === null && totalCompletion === null) {
    if (hasStepUsage) fail('ATIF final_metrics omits token totals despite per-step token metrics');
    if (totalCached !== null) fail('ATIF final_metrics cannot represent total_cached_tokens without prompt and completion token totals');
    return null;
  }
  if (totalPrompt === null || totalCompletion === null) fail('ATIF final_metrics must provide both prompt and completion token totals');
  let prompt = totalPrompt!;
  let completion = totalCompletion!;
  let cached = totalCached;
  if (hasStepUsage) {
    const metrics = steps.map((s) => s.metrics!);
    prompt = metrics.reduce((a, m) => a + (n(m.prompt_tokens) ?? 0), 0);
    completion = metrics.reduce((a, m) => a + (n(m.completion_tokens) ?? 0), 0);
    if (prompt !== totalPrompt || completion !== totalCompletion)
      fail('ATIF final token totals do not match the complete per-model-step metrics');
    const stepCached = metrics.map((m) => n(m.cached_tokens));
    const known = stepCached.filter((v) => v !== null).length;
    if (known === stepCached.length) {
      cached = sumIfAll(stepCached);
      if (totalCached !== null && cached !== totalCached) fail('ATIF final cached-token total does not match the per-model-step metrics');
    } else if (known > 0) {
      cached = null; // partly reported: no honest total
    }
  }
  const computed = prompt + completion;
  if (reported !== null && reported < computed) fail('ATIF total_tokens metadata is smaller than prompt_tokens + completion_tokens');
  if (reasoning !== null && reasoning > completion) fail('ATIF reasoning_tokens metadata exceeds total completion tokens');
  return {
    input_tokens: prompt,
    cached_tokens: cached,
    output_tokens: completion,
    reasoning_tokens: reasoning,
    total_tokens: reported ?? computed,
  };
}
