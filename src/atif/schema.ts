/**
 * The ATIF v1.7 subset NeMo Gym 0.7.0 reads (its `AtifTrajectoryV1_7`), as zod schemas over
 * strict-JSON values (strict-json.ts): unknown fields are refused, integers are JSON integers (not
 * bools, not floats), floats accept integers and become floats, absent optional fields read as null.
 * `extra` objects are the format's extension points and pass through untouched.
 */
import { z } from 'zod';
import { isJsonInt, isJsonObject, PyFloat, type JsonObject, type JsonValue } from './strict-json.js';
import { isoTimestampProblem } from './timestamps.js';

export const ATIF_SCHEMA_VERSION = 'ATIF-v1.7';

const int = () => z.custom<number | bigint>(isJsonInt, { error: 'Input should be a valid integer' });
const count = () => int().refine((v) => v >= 0, { error: 'Input should be greater than or equal to 0' });
const float = () =>
  z
    .custom<number | bigint | PyFloat>((v) => isJsonInt(v) || v instanceof PyFloat, { error: 'Input should be a valid number' })
    .transform((v) => (v instanceof PyFloat ? v : new PyFloat(Number(v))));
const str = () => z.string({ error: 'Input should be a valid string' });
const dict = () => z.custom<JsonObject>(isJsonObject, { error: 'Input should be a valid dictionary' });
const opt = <T extends z.ZodType>(t: T) => t.nullable().default(null);
/** A strict object that refuses a float (a `PyFloat` instance is an object to zod). */
const model = <S extends z.ZodRawShape>(shape: S) =>
  z.preprocess((v) => (v instanceof PyFloat ? v.value : v), z.strictObject(shape, { error: 'Input should be a valid dictionary' }));

const imageSource = model({
  media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
  path: str(),
});

const contentPart = model({
  type: z.enum(['text', 'image']),
  text: opt(str()),
  source: opt(imageSource),
}).superRefine((p, ctx) => {
  const problem =
    p.type === 'text'
      ? p.text === null
        ? 'text content parts require text'
        : p.source !== null
          ? 'text content parts cannot contain an image source'
          : null
      : p.source === null
        ? 'image content parts require source'
        : p.text !== null
          ? 'image content parts cannot contain text'
          : null;
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
export type AtifContentPart = z.output<typeof contentPart>;

const content = z.union([str(), z.array(contentPart)], { error: 'Input should be a valid string or a list of content parts' });
export type AtifContent = z.output<typeof content>;

const toolCall = model({ tool_call_id: str(), function_name: str(), arguments: dict(), extra: opt(dict()) });

const observationResult = model({
  source_call_id: opt(str()),
  content: opt(content),
  subagent_trajectory_ref: opt(z.array(dict())),
  extra: opt(dict()),
});

const tokenIds = z.custom<Array<number | bigint>>((v) => Array.isArray(v) && v.every((t) => isJsonInt(t) && t >= 0), {
  error: 'token IDs must be non-negative JSON integer arrays',
});
const logprobs = z
  .custom<Array<number | PyFloat>>((v) => Array.isArray(v) && v.every((t) => isJsonInt(t) || t instanceof PyFloat), {
    error: 'log probabilities must be finite JSON number arrays',
  })
  .transform((a) => a.map((t) => (t instanceof PyFloat ? t : new PyFloat(Number(t)))));

const stepMetrics = model({
  prompt_tokens: opt(count()),
  completion_tokens: opt(count()),
  cached_tokens: opt(count()),
  cost_usd: opt(float().refine((f) => f.value >= 0, { error: 'Input should be greater than or equal to 0' })),
  prompt_token_ids: opt(tokenIds),
  completion_token_ids: opt(tokenIds),
  logprobs: opt(logprobs),
  extra: opt(dict()),
});

const AGENT_ONLY = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const;

const step = model({
  step_id: int().refine((v) => v >= 1, { error: 'Input should be greater than or equal to 1' }),
  source: z.enum(['system', 'user', 'agent'], { error: "Input should be 'system', 'user' or 'agent'" }),
  message: content,
  timestamp: opt(
    str().superRefine((t, ctx) => void (isoTimestampProblem(t) && ctx.addIssue({ code: 'custom', message: isoTimestampProblem(t)! }))),
  ),
  model_name: opt(str()),
  reasoning_effort: opt(z.union([str(), float()])),
  reasoning_content: opt(str()),
  tool_calls: opt(z.array(toolCall)),
  observation: opt(model({ results: z.array(observationResult) })),
  metrics: opt(stepMetrics),
  llm_call_count: opt(count()),
  is_copied_context: opt(z.boolean()),
  extra: opt(dict()),
}).superRefine((s, ctx) => {
  if (s.source !== 'agent') {
    const field = AGENT_ONLY.find((f) => s[f] !== null);
    if (field) return void ctx.addIssue({ code: 'custom', message: `field '${field}' is only valid for agent steps` });
  }
  if (s.llm_call_count === 0 && (s.reasoning_effort !== null || s.reasoning_content !== null || s.metrics !== null)) {
    ctx.addIssue({ code: 'custom', message: 'llm_call_count=0 cannot include reasoning or LLM metrics' });
  }
});
export type AtifStep = z.output<typeof step>;

const finalMetrics = model({
  total_prompt_tokens: opt(count()),
  total_completion_tokens: opt(count()),
  total_cached_tokens: opt(count()),
  total_cost_usd: opt(float().refine((f) => f.value >= 0, { error: 'Input should be greater than or equal to 0' })),
  total_steps: opt(count()),
  extra: opt(dict()),
});

export const AtifTrajectorySchema = model({
  schema_version: z.literal(ATIF_SCHEMA_VERSION, { error: `Input should be '${ATIF_SCHEMA_VERSION}'` }),
  session_id: opt(str()),
  trajectory_id: opt(str()),
  agent: model({
    name: str(),
    version: str(),
    model_name: opt(str()),
    tool_definitions: opt(z.array(dict())),
    extra: opt(dict()),
  }),
  steps: z.array(step).min(1, { error: 'List should have at least 1 item after validation, not 0' }),
  notes: opt(str()),
  final_metrics: opt(finalMetrics),
  continued_trajectory_ref: opt(str()),
  subagent_trajectories: opt(z.array(dict())),
  extra: opt(dict()),
}).superRefine((t, ctx) => {
  for (const [index, s] of t.steps.entries()) {
    if (s.step_id !== index + 1 && BigInt(s.step_id) !== BigInt(index + 1)) {
      return void ctx.addIssue({
        code: 'custom',
        message: `steps[${index}].step_id: expected ${index + 1} (sequential from 1), got ${s.step_id}`,
      });
    }
    const callIds = new Set((s.tool_calls ?? []).map((c) => c.tool_call_id));
    for (const r of s.observation?.results ?? []) {
      if (r.source_call_id !== null && !callIds.has(r.source_call_id)) {
        return void ctx.addIssue({
          code: 'custom',
          message: `step ${s.step_id} observation references unknown tool call '${r.source_call_id}'`,
        });
      }
    }
  }
  const total = t.final_metrics?.total_steps ?? null;
  if (total !== null && Number(total) !== t.steps.length) {
    ctx.addIssue({
      code: 'custom',
      message: `final_metrics.total_steps must equal the number of trajectory steps: expected ${t.steps.length}, got ${total}`,
    });
  }
});
export type AtifTrajectory = z.output<typeof AtifTrajectorySchema>;

/** One line for the first problem zod found: `<field path>: <what is wrong>` (NeMo Gym prints pydantic's report). */
export function schemaProblem(error: z.ZodError, input: JsonValue): string {
  const issue = error.issues[0];
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  let path = issue.path.map(String).join('.');
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    path = [...issue.path.map(String), issue.keys[0]].join('.');
    message = 'Extra inputs are not permitted';
  } else if (issue.path.length > 0 && valueAt(input, issue.path) === undefined) {
    message = 'Field required';
  }
  return `${path ? `${path}: ` : ''}${message}${more}`;
}

function valueAt(v: unknown, path: PropertyKey[]): unknown {
  for (const p of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}
