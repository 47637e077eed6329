/**
 * The `/verify` request body of reverify (spec §4.7.3, §2.2; NeMo Gym 0.7.0), built on raw text so
 * big integers and float spellings of both rows reach the resources server unchanged.
 */
import { scanObject, setFields, setFieldsScanned, spansOf, topLevelSpans } from './json-spans.js';
import { CARRIED_ROLLOUT_KEYS, RESPONSE_KEY } from './keys.js';
import { stampsFromSpans, type Stamps } from './outcome.js';
import { taskRowOf } from './task-input.js';
import { pairedFactsOf, type PairedFacts } from './paired-facts.js';

/**
 * The row text with `response` set to the rollout's raw `response` value, then each `carried`
 * rollout field set: an existing key keeps its position and is overridden, otherwise it is
 * appended. The row text itself is never modified (strings are immutable); any whitespace in it
 * is kept. Without carried fields, nothing else from the rollout is added.
 */
export function buildPayload(rowRaw: string, responseRaw: string, carried: ReadonlyArray<[string, string]> = []): string {
  return setFields(rowRaw, [[RESPONSE_KEY, responseRaw], ...carried]);
}

/** Raw text of the rollout row's top-level `response` value (last duplicate wins), or `null` if absent. */
export function readRolloutResponse(rolloutRaw: string): string | null {
  return readRollout(rolloutRaw).response;
}

/**
 * What a `/verify` body takes from the rollout row: its `response`, and the verifier inputs
 * NeMo Gym 0.7.0 carries when the rollout has them (`deliverables_dir`, `reference_ids`: any value,
 * `null` included), as raw texts (last duplicate wins).
 */
export function readRollout(rolloutRaw: string): { response: string | null; carried: Array<[string, string]>; old: PairedFacts } {
  const spans = topLevelSpans(rolloutRaw);
  const raw = (key: string) => {
    const s = spans.get(key);
    return s === undefined ? undefined : rolloutRaw.slice(s.start, s.end);
  };
  const carried: Array<[string, string]> = [];
  for (const key of CARRIED_ROLLOUT_KEYS) {
    const value = raw(key);
    if (value !== undefined) carried.push([key, value]);
  }
  return { response: raw(RESPONSE_KEY) ?? null, carried, old: pairedFactsOf(raw) };
}

/**
 * The `/verify` body of one planned row and the stamps its result gets: the materialized input
 * row (a task row's fields lifted, `task-input.ts`) with the rollout's `response` and carried
 * fields; the stamps are the body's. A row without `task_input`, and a rollout without carried
 * fields, give exactly `buildPayload(inputRaw, response)`. Both rows were validated by the plan.
 */
export function verifyRequest(inputRaw: string, rolloutRaw: string): { payload: string; stamps: Stamps; old: PairedFacts } {
  let scan = scanObject(inputRaw);
  const row = taskRowOf(inputRaw, scan);
  if (row !== inputRaw) scan = scanObject(row);
  const stamps = stampsFromSpans(row, spansOf(scan));
  const { response, carried, old } = readRollout(rolloutRaw);
  if (response === null) throw new Error('rollout row has no response: validate rollout rows before building payloads');
  return { payload: setFieldsScanned(row, scan, [[RESPONSE_KEY, response], ...carried]), stamps, old };
}
