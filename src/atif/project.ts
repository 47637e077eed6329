/**
 * The projection of a supported ATIF trajectory into the Responses-style `response` NeMo Gym
 * 0.7.0 scores: its agent steps, in order, become reasoning items, output messages, function calls
 * and their outputs, with ids derived from the trajectory's identity; plus the response's id,
 * creation time, model and usage. Pure. The request fields come from the materialized input
 * (response.ts).
 */
import { pyStrRepr } from '../contract/python-repr.js';
import { compareCodePoints } from '../contract/row-key.js';
import { identitySeed, itemId } from './content-hash.js';
import { pyJsonDumps } from './py-json.js';
import type { AtifStep, AtifTrajectory } from './schema.js';
import { AtifProjectionError, checkSupported, textParts } from './supported.js';
import { epochSeconds } from './timestamps.js';
import { usageOf, type Usage } from './usage.js';

/** What the projection made: output items as JSON texts, and the response's own fields. */
export interface Projection {
  id: string;
  createdAt: number;
  model: string;
  output: string[];
  parallelToolCalls: boolean;
  usage: Usage | null;
  /** An output item is a `function_call` (the MCP-exposure check needs it). */
  hasFunctionCalls: boolean;
}

const fail = (message: string): never => {
  throw new AtifProjectionError(message);
};
const q = JSON.stringify;
const blank = (s: string) => s.trim() === '';

type Result = NonNullable<AtifStep['observation']>['results'][number];

/** A tool result as the response carries it: its text, its text parts, or Relay's structured `extra.tool_result`. */
function observationOutput(r: Result, field: string): string {
  const relay = r.extra !== null && 'tool_result' in r.extra;
  if (r.content !== null && relay) fail(`${field} contains both content and Relay extra.tool_result`);
  if (r.content !== null) {
    const parts = textParts(r.content, field);
    if (typeof r.content === 'string') return q(r.content);
    return `[${parts.map((text) => `{"text":${q(text)},"type":"input_text"}`).join(',')}]`;
  }
  if (relay) {
    const result = r.extra!.tool_result;
    return q(typeof result === 'string' ? result : pyJsonDumps(result, true));
  }
  return fail(`${field} has neither content nor Relay extra.tool_result`);
}

/** Output items of one agent step; `calls` and `answered` carry the tool-call ids seen across steps. */
function stepItems(step: AtifStep, seed: string, calls: Set<string>, answered: Set<string>): string[] {
  const prefix = `step ${step.step_id}`;
  const id = String(step.step_id);
  const items: string[] = [];
  if (step.reasoning_content !== null) {
    items.push(
      `{"id":${q(itemId(seed, 'reasoning', id))},"summary":[{"text":${q(step.reasoning_content)},"type":"summary_text"}],` +
        '"type":"reasoning","encrypted_content":null,"content":null}',
    );
  }
  const toolCalls = step.tool_calls ?? [];
  const texts = textParts(step.message, `${prefix} message`);
  if (texts.length > 0 || toolCalls.length === 0) {
    const content = (texts.length > 0 ? texts : ['']).map((t) => `{"annotations":[],"text":${q(t)},"type":"output_text","logprobs":null}`);
    items.push(
      `{"id":${q(itemId(seed, 'message', id))},"content":[${content.join(',')}],"role":"assistant","status":"completed","type":"message","phase":null}`,
    );
  }
  const stepCalls = new Set<string>();
  for (const call of toolCalls) {
    const cid = call.tool_call_id;
    if (blank(cid)) fail(`${prefix} contains a tool call with a blank tool_call_id`);
    if (blank(call.function_name)) fail(`${prefix} tool call ${pyStrRepr(cid)} has a blank function_name`);
    if (stepCalls.has(cid)) fail(`${prefix} repeats tool_call_id ${pyStrRepr(cid)}`);
    if (calls.has(cid)) fail(`ATIF trajectory repeats tool_call_id ${pyStrRepr(cid)} across steps`);
    stepCalls.add(cid);
    calls.add(cid);
    items.push(
      `{"arguments":${q(pyJsonDumps(call.arguments, true))},"call_id":${q(cid)},"name":${q(call.function_name)},"type":"function_call",` +
        `"id":${q(itemId(seed, 'function-call', cid))},"status":"completed","namespace":null}`,
    );
  }
  const stepAnswered = new Set<string>();
  for (const [index, r] of (step.observation?.results ?? []).entries()) {
    const field = `${prefix} observation ${index}`;
    if (r.subagent_trajectory_ref !== null && r.subagent_trajectory_ref.length > 0) fail(`${field} references a subagent trajectory`);
    const cid = r.source_call_id ?? fail(`${field} has no source_call_id`);
    if (!stepCalls.has(cid)) fail(`${field} references unknown tool call ${pyStrRepr(cid)}`);
    if (answered.has(cid)) fail(`ATIF trajectory contains multiple outputs for tool call ${pyStrRepr(cid)}`);
    answered.add(cid);
    stepAnswered.add(cid);
    const output = observationOutput(r, field);
    items.push(
      `{"id":${q(itemId(seed, 'function-output', cid, String(index)))},"call_id":${q(cid)},"output":${output},` +
        '"status":"completed","type":"function_call_output","created_by":null}',
    );
  }
  const unresolved = [...stepCalls].filter((c) => !stepAnswered.has(c)).map(pyStrRepr);
  if (unresolved.length > 0) fail(`${prefix} has no observation result for tool call(s) ${unresolved.sort(compareCodePoints).join(', ')}`);
  return items;
}

/** Seconds of the last agent step that has a timestamp (0 without one); refuses a timestamp without a timezone. */
function createdAt(agentSteps: AtifStep[]): number {
  for (const step of [...agentSteps].reverse()) {
    if (step.timestamp === null) continue;
    return (
      epochSeconds(step.timestamp) ?? fail(`agent step ${step.step_id} timestamp has no timezone and cannot produce a stable created_at`)
    );
  }
  return 0;
}

/** The one model the agent steps name (a step's own, else the agent's), or `unknown` when none does. */
function modelName(t: AtifTrajectory, agentSteps: AtifStep[]): string {
  const resolved = agentSteps.map((s) => (s.model_name ? s.model_name : t.agent.model_name));
  const known = new Set(resolved.filter((m): m is string => m !== null));
  if (known.size > 1) fail('ATIF agent steps resolve to multiple model names and cannot be represented by one verifier response');
  if (known.size > 0 && resolved.includes(null)) {
    fail('ATIF agent steps mix known and unknown model identity and cannot be represented by one verifier response');
  }
  return known.size > 0 ? [...known][0] : 'unknown';
}

/** Projects a validated trajectory; throws `AtifProjectionError` with the reason it cannot be scored as is. */
export function projectTrajectory(t: AtifTrajectory): Projection {
  checkSupported(t);
  const agentSteps = t.steps.filter((s) => s.source === 'agent');
  if (agentSteps.length === 0) fail('ATIF trajectory has no agent steps to score');
  const seed = identitySeed(t);
  const calls = new Set<string>();
  const answered = new Set<string>();
  const output = agentSteps.flatMap((s) => stepItems(s, seed, calls, answered));
  return {
    id: itemId(seed, 'response'),
    createdAt: createdAt(agentSteps),
    model: modelName(t, agentSteps),
    output,
    parallelToolCalls: agentSteps.some((s) => (s.tool_calls ?? []).length > 1),
    usage: usageOf(t),
    hasFunctionCalls: calls.size > 0,
  };
}
