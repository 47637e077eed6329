/**
 * The text-only, stateless part of ATIF v1.7 that can be projected into one Responses-style
 * `response` without guessing (NeMo Gym 0.7.0's rules): no continued or subagent trajectories, no
 * images, no copied context, no training token metadata, agent steps last and not mixing text with
 * tool calls, one LLM call per step. Each refusal is one line saying which step and why.
 */
import type { AtifContent, AtifStep, AtifTrajectory } from './schema.js';

/** A trajectory NeMo Gym's projection refuses (its `AtifProjectionError`): the message says why. */
export class AtifProjectionError extends Error {
  override readonly name = 'AtifProjectionError';
}

/** The texts of a message or result: a string (none when empty) or text parts; refuses an empty or non-text part list. */
export function textParts(value: AtifContent, field: string): string[] {
  if (typeof value === 'string') return value ? [value] : [];
  if (value.length === 0) throw new AtifProjectionError(`${field} contains an empty content-part list`);
  return value.map((part, index) => {
    if (part.type !== 'text' || part.text === null)
      throw new AtifProjectionError(`${field} part ${index} is not losslessly projectable text`);
    return part.text;
  });
}

function hasImages(content: AtifContent | null): boolean {
  return Array.isArray(content) && content.some((part) => part.type !== 'text');
}

function multimodal(t: AtifTrajectory): boolean {
  return t.steps.some((s) => hasImages(s.message) || (s.observation?.results ?? []).some((r) => hasImages(r.content)));
}

function refuseTrainingMetadata(step: AtifStep): void {
  const m = step.metrics;
  if (m && (m.prompt_token_ids !== null || m.completion_token_ids !== null || m.logprobs !== null)) {
    throw new AtifProjectionError(
      `step ${step.step_id} contains training token metadata that the initial reverify adapter does not support`,
    );
  }
}

/** Throws `AtifProjectionError` for the first feature of `t` the projection cannot carry. */
export function checkSupported(t: AtifTrajectory): void {
  if (t.continued_trajectory_ref !== null) {
    throw new AtifProjectionError('continued ATIF trajectories are not supported by the initial reverify adapter');
  }
  if (t.subagent_trajectories !== null && t.subagent_trajectories.length > 0) {
    throw new AtifProjectionError('embedded subagent trajectories are not supported by the initial reverify adapter');
  }
  if (multimodal(t)) throw new AtifProjectionError('multimodal ATIF content cannot be projected losslessly for reverification');
  const copied = t.steps.filter((s) => s.is_copied_context === true).map((s) => s.step_id);
  if (copied.length > 0) {
    throw new AtifProjectionError(`copied continuation context is not supported; copied step IDs: [${copied.join(', ')}]`);
  }
  let sawAgent = false;
  for (const step of t.steps) {
    refuseTrainingMetadata(step);
    if (step.source === 'agent') {
      if (step.tool_calls && step.tool_calls.length > 0 && textParts(step.message, `step ${step.step_id} message`).length > 0) {
        throw new AtifProjectionError(
          `agent step ${step.step_id} contains both message text and tool calls; ATIF does not preserve their provider output-item ordering`,
        );
      }
      if (step.llm_call_count !== null && step.llm_call_count > 1) {
        throw new AtifProjectionError(
          `agent step ${step.step_id} aggregates ${step.llm_call_count} LLM calls and cannot be projected into one ordered Responses sequence`,
        );
      }
      sawAgent = true;
    } else if (sawAgent) {
      throw new AtifProjectionError(`non-agent step ${step.step_id} appears after agent output and would change the scored conversation`);
    }
    if (step.source !== 'agent' && step.observation !== null) {
      throw new AtifProjectionError(`non-agent step ${step.step_id} contains an observation that cannot be projected into a response`);
    }
    for (const [index, r] of (step.observation?.results ?? []).entries()) {
      if (r.subagent_trajectory_ref !== null && r.subagent_trajectory_ref.length > 0) {
        throw new AtifProjectionError(`step ${step.step_id} observation ${index} references a subagent trajectory`);
      }
    }
  }
}
