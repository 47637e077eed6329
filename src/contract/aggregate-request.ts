/**
 * Rows as sent to `POST /aggregate_metrics` (spec §2.3, §4.15), stripped on raw text so every
 * other field (big integers included) reaches the server unchanged.
 */
import { scanObject, setFieldsScanned, spansOf, topLevelSpans, type ObjectScan } from './json-spans.js';
import {
  AGENT_OBSERVATIONS_KEY,
  ATIF_PROVENANCE_KEY,
  MODEL_CALL_CAPTURE_KEY,
  RESPONSE_KEY,
  RESPONSES_CREATE_PARAMS_KEY,
  TRAJECTORY_KEY,
} from './keys.js';
import { rawTruthy } from './python-truthiness.js';

/** Raw `response.usage` text when `response` is an object and its `usage` is truthy in Python terms. */
function truthyUsage(rowRaw: string, scan: ObjectScan): string | null {
  const response = spansOf(scan).get(RESPONSE_KEY);
  if (response === undefined || rowRaw.charCodeAt(response.start) !== 0x7b) return null;
  const responseRaw = rowRaw.slice(response.start, response.end);
  const usage = topLevelSpans(responseRaw).get('usage');
  if (usage === undefined) return null;
  const usageRaw = responseRaw.slice(usage.start, usage.end);
  return rawTruthy(usageRaw) ? usageRaw : null;
}

function strip(rowRaw: string, remove: string[]): string {
  const scan = scanObject(rowRaw);
  const usage = truthyUsage(rowRaw, scan);
  const fields: Array<[string, string]> = usage === null ? [] : [[RESPONSE_KEY, `{"usage":${usage}}`]];
  return setFieldsScanned(rowRaw, scan, fields, remove);
}

/**
 * Reverify's aggregation entry (§2.3): the row without `response`, `responses_create_params` and
 * (NeMo Gym 0.7.0) `_ng_atif_provenance`;
 * if `response.usage` is truthy, `"response":{"usage":<raw usage>}` is appended at the end (as
 * Python's `entry["response"] = ...` does). Everything else, heavy collector fields included, is kept raw.
 */
export function stripForAggregation(rowRaw: string): string {
  return strip(rowRaw, [RESPONSE_KEY, RESPONSES_CREATE_PARAMS_KEY, ATIF_PROVENANCE_KEY]);
}

/**
 * `gym eval aggregate`'s entry (§4.15): like `stripForAggregation`, and also without
 * `ng_agent_observations`, `ng_model_call_capture` and `ng_trajectory`.
 */
export function stripForShardAggregation(rowRaw: string): string {
  return strip(rowRaw, [RESPONSE_KEY, RESPONSES_CREATE_PARAMS_KEY, AGENT_OBSERVATIONS_KEY, MODEL_CALL_CAPTURE_KEY, TRAJECTORY_KEY]);
}

/** The `/aggregate_metrics` request body `{"verify_responses":[...]}` from stripped row texts. */
export function aggregateRequestBody(strippedRows: readonly string[]): string {
  return `{"verify_responses":[${strippedRows.map((r) => r.trim()).join(',')}]}`;
}
