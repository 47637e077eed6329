/**
 * The `response` sent to `/verify` for an ATIF row: the projection (project.ts) in the field order
 * of NeMo Gym 0.7.0's response model, with the request fields a native Gym response carries taken
 * from the materialized input's `responses_create_params` (the task stays authoritative for them).
 * Built on raw text: the materialized values are copied as written.
 */
import { pyFloatRepr } from '../contract/python-repr.js';
import { topLevelSpans } from '../contract/json-spans.js';
import type { Projection } from './project.js';
import { AtifProjectionError } from './supported.js';

/** Request fields a Gym response echoes; their values come from `responses_create_params` when it has them. */
const REQUEST_FIELDS = new Set([
  'background',
  'instructions',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'parallel_tool_calls',
  'previous_response_id',
  'prompt',
  'reasoning',
  'service_tier',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'user',
]);

/** Float fields: an integer written in the task prints as a float, as the response model makes it. */
const FLOAT_FIELDS = new Set(['temperature', 'top_p']);

/** The response's fields in order, with the value the projection gives each (null unless set). */
function projectedFields(p: Projection): Array<[string, string]> {
  const u = p.usage;
  const usage =
    u === null
      ? 'null'
      : `{"input_tokens":${u.input_tokens},"input_tokens_details":{"cached_tokens":${u.cached_tokens ?? 'null'}},` +
        `"output_tokens":${u.output_tokens},"output_tokens_details":{"reasoning_tokens":${u.reasoning_tokens ?? 'null'}},` +
        `"total_tokens":${u.total_tokens}}`;
  const fields: Record<string, string> = {
    id: JSON.stringify(p.id),
    created_at: pyFloatRepr(p.createdAt),
    model: JSON.stringify(p.model),
    object: '"response"',
    output: `[${p.output.join(',')}]`,
    parallel_tool_calls: String(p.parallelToolCalls),
    tool_choice: '"auto"',
    tools: '[]',
    status: '"completed"',
    usage,
  };
  const order =
    'id created_at error incomplete_details instructions metadata model object output parallel_tool_calls temperature tool_choice tools ' +
    'top_p background completed_at conversation max_output_tokens max_tool_calls moderation previous_response_id prompt prompt_cache_key ' +
    'prompt_cache_retention reasoning safety_identifier service_tier status text top_logprobs truncation usage user';
  return order.split(' ').map((k) => [k, fields[k] ?? 'null']);
}

/**
 * The `response` JSON text of a projection for a materialized input row (its raw text). Refuses a
 * row without a `responses_create_params` object, as NeMo Gym does.
 */
export function responseJson(p: Projection, inputRaw: string): string {
  const span = topLevelSpans(inputRaw).get('responses_create_params');
  const paramsRaw = span === undefined ? '' : inputRaw.slice(span.start, span.end);
  if (!paramsRaw.startsWith('{')) throw new AtifProjectionError('materialized input has no responses_create_params object');
  const params = topLevelSpans(paramsRaw);
  const fields = projectedFields(p).map(([k, v]): [string, string] => {
    const s = REQUEST_FIELDS.has(k) ? params.get(k) : undefined;
    if (s === undefined) return [k, v];
    const raw = paramsRaw.slice(s.start, s.end);
    return [k, FLOAT_FIELDS.has(k) && /^-?\d+$/.test(raw) ? `${raw}.0` : raw];
  });
  return `{${fields.map(([k, v]) => `"${k}":${v}`).join(',')}}`;
}
