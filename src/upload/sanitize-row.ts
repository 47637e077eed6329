/**
 * A row as NeMo Gym 0.7.0 exports it to an experiment tracker (`_rollout_for_export`, spec §4.12),
 * shape by shape:
 * - `ng_trajectory` is dropped, whatever it holds;
 * - `ng_model_call_capture` that is an object is kept and moved to the end of the row: its `calls`
 *   list keeps only the calls that are objects, each without `request`, `response`, `request_raw`
 *   and `response_raw`; a `calls` that is not a list (null, a string, an object) is removed; an
 *   absent `calls` stays absent; its other members stay as they are, in place;
 * - `ng_model_call_capture` that is not an object (null, a list, a string, a number) is dropped;
 * - every other member is kept in place (`ng_agent_observations`, `ng_perf`, ...).
 * The row is read and written as orjson does (orjson-text.ts), so the text is byte for byte what
 * NeMo Gym's exporters log.
 */
import { MODEL_CALL_CAPTURE_KEY, TRAJECTORY_KEY } from '../contract/keys.js';
import { readElements, readMembers, writeObject } from './orjson-text.js';

const DROPPED: ReadonlySet<string> = new Set([TRAJECTORY_KEY]);

/** The keys removed from each captured model call. */
export const MODEL_CALL_PAYLOAD_KEYS = ['request', 'response', 'request_raw', 'response_raw'] as const;

function isObjectText(text: string): boolean {
  return text.charCodeAt(0) === 0x7b;
}

function sanitizeCall(call: string): string {
  const members = readMembers(call);
  for (const k of MODEL_CALL_PAYLOAD_KEYS) members.delete(k);
  return writeObject(members);
}

function sanitizeCapture(capture: string): string {
  const members = readMembers(capture);
  const calls = members.get('calls');
  if (calls !== undefined) {
    if (calls.charCodeAt(0) === 0x5b) members.set('calls', `[${readElements(calls).filter(isObjectText).map(sanitizeCall).join(',')}]`);
    else members.delete('calls');
  }
  return writeObject(members);
}

/** The exported form of one main-output row (its JSON text), as orjson writes it. */
export function sanitizeForExport(rowText: string): string {
  const row = readMembers(rowText, DROPPED);
  const capture = row.get(MODEL_CALL_CAPTURE_KEY);
  row.delete(MODEL_CALL_CAPTURE_KEY);
  if (capture !== undefined && isObjectText(capture)) row.set(MODEL_CALL_CAPTURE_KEY, sanitizeCapture(capture));
  return writeObject(row);
}
