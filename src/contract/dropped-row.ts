/**
 * The line NeMo Gym 0.7.0 prints for every rollout routed to the failures sidecar ("dropped from
 * the score"), built from the sidecar row: its key, agent, environment server and taskset as
 * Python's `json.dumps(..., sort_keys=True)` writes them, its failure class, and the first 200
 * characters of its failure message (or `error`).
 */
import {
  AGENT_REF_KEY,
  ENVIRONMENT_SERVER_KEY,
  FAILURE_CLASS_KEY,
  FAILURE_MESSAGE_KEY,
  ROLLOUT_INDEX_KEY,
  TASK_ID_KEY,
  TASK_INDEX_KEY,
  TASK_INPUT_KEY,
} from './keys.js';
import { topLevelSpans } from './json-spans.js';
import { pythonReprJson } from './python-repr.js';
import { rawTruthy } from './python-truthiness.js';

export const DROPPED_FROM_SCORE = '🚨 [rollout_reverification] rollout dropped from the score: ';

/** Characters of the failure detail shown. */
const DETAIL_CHARS = 200;

/** A JSON string as Python's `json.dumps` writes it (`ensure_ascii`: non-ASCII as `\uXXXX`). */
export function pyJsonString(s: string): string {
  return JSON.stringify(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `str(value)` in Python for a raw JSON value: a string is itself, anything else its repr. */
function pyStr(raw: string): string {
  const v: unknown = JSON.parse(raw);
  return typeof v === 'string' ? v : pythonReprJson(raw);
}

/** The failure class and the line of one sidecar row; null when the line is not a JSON object. */
export function droppedFromScore(rowText: string): { failureClass: string; line: string } | null {
  let spans;
  try {
    spans = topLevelSpans(rowText);
  } catch {
    return null;
  }
  const raw = (key: string) => {
    const span = spans.get(key);
    return span === undefined ? undefined : rowText.slice(span.start, span.end).trim();
  };
  const parsed = (key: string): unknown => {
    const r = raw(key);
    return r === undefined ? undefined : JSON.parse(r);
  };
  // The summary's members, in sorted order; absent and null ones left out. Indices keep their digits.
  const members: Array<[string, string | undefined]> = [];
  const index = (key: string) => {
    const r = raw(key);
    members.push([key, r === undefined || r === 'null' ? undefined : /^"/.test(r) ? pyJsonString(JSON.parse(r) as string) : r]);
  };
  const text = (key: string, v: unknown) => members.push([key, typeof v === 'string' ? pyJsonString(v) : undefined]);
  index(ROLLOUT_INDEX_KEY);
  index(TASK_INDEX_KEY);
  const agentRef = parsed(AGENT_REF_KEY);
  text('agent_name', isObject(agentRef) ? agentRef.name : undefined);
  text('environment_server', parsed(ENVIRONMENT_SERVER_KEY));
  const taskId = parsed(TASK_ID_KEY);
  const taskset = isObject(taskId) && spans.has(TASK_INPUT_KEY) ? taskId.taskset : undefined;
  text('taskset', typeof taskset === 'string' && taskset !== '' ? taskset : undefined);
  members.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const summary = `{${members
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${pyJsonString(k)}: ${v}`)
    .join(', ')}}`;

  const failureClassRaw = raw(FAILURE_CLASS_KEY);
  const failureClass = failureClassRaw === undefined ? 'None' : pyStr(failureClassRaw);
  const detailRaw = [raw(FAILURE_MESSAGE_KEY), raw('error')].find((r) => r !== undefined && rawTruthy(r));
  const detail = Array.from(detailRaw === undefined ? '' : pyStr(detailRaw))
    .slice(0, DETAIL_CHARS)
    .join('');
  return { failureClass, line: `${DROPPED_FROM_SCORE}row=${summary} class=${failureClass} error=${detail}` };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
