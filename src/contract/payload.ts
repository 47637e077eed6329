/**
 * The `/verify` request body of reverify (spec §4.7.3, §2.2), built on raw text so big integers and
 * float spellings of both rows reach the resources server unchanged.
 */
import { setFields, topLevelSpans } from './json-spans.js';
import { RESPONSE_KEY } from './keys.js';

/**
 * The materialized input row text with `response` set to the rollout's raw `response` value: an
 * existing `response` keeps its position and is overridden, otherwise `response` is appended.
 * Nothing else from the rollout is carried. The input text itself is never modified (strings are
 * immutable); any whitespace in it is kept.
 */
export function buildPayload(inputRaw: string, responseRaw: string): string {
  return setFields(inputRaw, [[RESPONSE_KEY, responseRaw]]);
}

/** Raw text of the rollout row's top-level `response` value (last duplicate wins), or `null` if absent. */
export function readRolloutResponse(rolloutRaw: string): string | null {
  const span = topLevelSpans(rolloutRaw).get(RESPONSE_KEY);
  return span === undefined ? null : rolloutRaw.slice(span.start, span.end);
}
