/**
 * The `/verify` body of a planned row built on the rows' bytes: what `verifyRequest`
 * (src/contract/payload.ts) builds, byte for byte, without decoding either row to a string or
 * encoding the body back (at thousands of rows per second both were a visible share of the
 * worker's CPU and of its garbage). Only for the common rows; any other (a task row, a row with an
 * escaped top-level key, bytes that are not valid UTF-8, a row the byte scanner does not vouch for)
 * gets `null`, and the caller builds it with `verifyRequest`, which also words its errors.
 */
import { isUtf8 } from 'node:buffer';
import {
  AGENT_REF_KEY,
  CARRIED_ROLLOUT_KEYS,
  ENVIRONMENT_SERVER_KEY,
  RESPONSE_KEY,
  ROLLOUT_INDEX_KEY,
  SKILLS_REF_KEY,
  TASK_INDEX_KEY,
  TASK_INPUT_KEY,
  TASK_SOURCE_KEY,
} from '../../src/contract/keys.js';
import type { Stamps } from '../../src/contract/outcome.js';
import { assignMembers, AssignableNames, type Assignment } from '../../src/io/json-line-assign.js';
import { scanJsonObjectLine, SCAN_NO } from '../../src/contract/json-line-scan.js';

/** Members of the input row: where the body's members go, and its stamps (`stampsFromSpans`). */
const INPUT = new AssignableNames([
  RESPONSE_KEY,
  ...CARRIED_ROLLOUT_KEYS,
  TASK_INPUT_KEY,
  TASK_INDEX_KEY,
  ROLLOUT_INDEX_KEY,
  AGENT_REF_KEY,
  ENVIRONMENT_SERVER_KEY,
  SKILLS_REF_KEY,
  TASK_SOURCE_KEY,
]);
/** Members of the rollout row the body takes (`readRollout`), in INPUT's slot order. */
const ROLLOUT = new AssignableNames([RESPONSE_KEY, ...CARRIED_ROLLOUT_KEYS]);
const TASK_INPUT = 1 + CARRIED_ROLLOUT_KEYS.length;
const STAMPS = TASK_INPUT + 1;
const OPTIONAL: Array<[keyof Stamps, number]> = [
  ['agentRef', STAMPS + 2],
  ['environmentServer', STAMPS + 3],
  ['skillsRef', STAMPS + 4],
  ['taskSource', STAMPS + 5],
];

const inputSlots = INPUT.slots();
const rolloutSlots = ROLLOUT.slots();

/** `verifyRequest(input, rollout)` on bytes (the body as bytes), or null where it must decide. */
export function verifyRequestBytes(input: Buffer, rollout: Buffer): { payload: Buffer; stamps: Stamps } | null {
  if (scanJsonObjectLine(input, 0, input.length, INPUT, inputSlots) === SCAN_NO || !isUtf8(input)) return null;
  if (inputSlots[2 * TASK_INPUT] >= 0) return null; // a task row: its fields are lifted (task-input.ts)
  if (inputSlots[2 * STAMPS] < 0 || inputSlots[2 * STAMPS + 2] < 0) return null;
  if (scanJsonObjectLine(rollout, 0, rollout.length, ROLLOUT, rolloutSlots) === SCAN_NO || !isUtf8(rollout)) return null;
  if (rolloutSlots[0] < 0) return null;
  const raw = (slot: number) => input.toString('utf8', inputSlots[2 * slot], inputSlots[2 * slot + 1]);
  const stamps: Stamps = { task: raw(STAMPS), rollout: raw(STAMPS + 1) };
  for (const [field, slot] of OPTIONAL) if (inputSlots[2 * slot] >= 0) stamps[field] = raw(slot);
  const assignments: Assignment[] = [];
  for (let slot = 0; slot < ROLLOUT.names.length; slot++) {
    const s = rolloutSlots[2 * slot];
    if (s >= 0) assignments.push({ slot, value: rollout.subarray(s, rolloutSlots[2 * slot + 1]) });
  }
  return { payload: Buffer.concat(assignMembers(input, 0, input.length, INPUT, inputSlots, assignments)), stamps };
}
