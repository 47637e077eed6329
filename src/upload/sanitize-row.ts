/**
 * A row as NeMo Gym 0.7.0 exports it to an experiment tracker (`_rollout_for_export`, spec §4.12):
 * without `ng_trajectory`; `ng_model_call_capture` kept, each of its `calls` without the raw
 * payloads (`request`, `response`, `request_raw`, `response_raw`), a call that is not an object
 * dropped, and a `calls` that is not a list removed. Edited on raw text, so big integers and
 * `1.0` survive; then compacted as orjson writes it.
 */
import { arrayElementSpans, rawField, setFields } from '../contract/json-spans.js';
import { isJsonWhitespace, QUOTE, BACKSLASH, LBRACE } from '../contract/json-chars.js';
import { MODEL_CALL_CAPTURE_KEY, TRAJECTORY_KEY } from '../contract/keys.js';

/** The keys removed from each captured model call. */
export const MODEL_CALL_PAYLOAD_KEYS = ['request', 'response', 'request_raw', 'response_raw'] as const;

function sanitizeCapture(captureRaw: string): string {
  const callsRaw = rawField(captureRaw, 'calls');
  if (callsRaw === undefined) return captureRaw;
  if (callsRaw.trimStart().charCodeAt(0) !== 0x5b) return setFields(captureRaw, [], ['calls']);
  const calls = arrayElementSpans(callsRaw)
    .map((s) => callsRaw.slice(s.start, s.end))
    .filter((call) => call.charCodeAt(0) === LBRACE)
    .map((call) => setFields(call, [], [...MODEL_CALL_PAYLOAD_KEYS]));
  return setFields(captureRaw, [['calls', `[${calls.join(',')}]`]]);
}

/** JSON text without insignificant whitespace (strings untouched). */
export function compactJson(raw: string): string {
  let out = '';
  let from = 0;
  const n = raw.length;
  for (let i = 0; i < n; i++) {
    const c = raw.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < n && raw.charCodeAt(i) !== QUOTE; i++) if (raw.charCodeAt(i) === BACKSLASH) i++;
    } else if (isJsonWhitespace(c)) {
      out += raw.slice(from, i);
      from = i + 1;
    }
  }
  return from === 0 ? raw : out + raw.slice(from);
}

/** The exported form of one main-output row (its raw JSON text), compact. */
export function sanitizeForExport(rowRaw: string): string {
  const capture = rawField(rowRaw, MODEL_CALL_CAPTURE_KEY);
  const fields: Array<[string, string]> =
    capture !== undefined && capture.charCodeAt(0) === LBRACE ? [[MODEL_CALL_CAPTURE_KEY, sanitizeCapture(capture)]] : [];
  return compactJson(setFields(rowRaw, fields, [TRAJECTORY_KEY]));
}
