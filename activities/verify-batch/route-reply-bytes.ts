/**
 * `routeReply` of a 2xx `/verify` reply on its bytes: the reply is checked by the byte scanner
 * instead of `JSON.parse`, read only where routing looks (`_ng_no_persist`, `_ng_failure_class`,
 * `reward`), and stamped on its bytes, which are written as they came. The same rows and counts as
 * `settleReply` + `routeReply`, without decoding the body, parsing the whole of it, or encoding the
 * stamped row again (at thousands of rows per second those were a visible share of the worker's CPU
 * and garbage). Only for the common replies; for any other it gives `null` and the caller takes the
 * text path, which also words what is wrong with a reply: a byte order mark, a reply on several
 * lines or with whitespace around it, bytes that are not valid UTF-8, an escaped top-level key, one
 * the scanner does not vouch for; re-judgments, ATIF runs and `--retry-invalid-judge-responses`.
 */
import { isUtf8 } from 'node:buffer';
import { isJsonWhitespace } from '../../src/contract/json-chars.js';
import {
  AGENT_REF_KEY,
  ENVIRONMENT_SERVER_KEY,
  FAILURE_CLASS_KEY,
  NO_PERSIST_KEY,
  ROLLOUT_INDEX_KEY,
  SKILLS_REF_KEY,
  TASK_INDEX_KEY,
  TASK_SOURCE_KEY,
} from '../../src/contract/keys.js';
import { stampFields, type Stamps } from '../../src/contract/outcome.js';
import { rawTruthy } from '../../src/contract/python-truthiness.js';
import type { RetryRules } from '../../src/contract/retry-rules.js';
import { assignMembers, AssignableNames, type Assignment } from '../../src/io/json-line-assign.js';
import { scanJsonObjectLine, SCAN_NO } from '../../src/contract/json-line-scan.js';
import { routeResult, type RowFacts, type Routed } from './route-reply.js';

/** The stamps' keys first, in `stampFields` order, then what routing reads. */
const STAMP_KEYS = [TASK_INDEX_KEY, ROLLOUT_INDEX_KEY, AGENT_REF_KEY, ENVIRONMENT_SERVER_KEY, TASK_SOURCE_KEY, SKILLS_REF_KEY];
const NAMES = new AssignableNames([...STAMP_KEYS, NO_PERSIST_KEY, FAILURE_CLASS_KEY, 'reward']);
const NO_PERSIST = STAMP_KEYS.length;
const FAILURE_CLASS = NO_PERSIST + 1;
const REWARD = NO_PERSIST + 2;
const slots = NAMES.slots();

/** `routeReply(settleReply(ok reply), …)` on the reply's bytes, or null where the text path must decide. */
export function routeReplyBytes(body: Buffer, stamps: Stamps, row: RowFacts, rules: RetryRules): Routed | null {
  if (rules.retryInvalidJudgeResponses || row.atif || row.rejudgment || stamps.atifProvenance !== undefined) return null;
  const end = body.length;
  if (end === 0 || isJsonWhitespace(body[0]) || isJsonWhitespace(body[end - 1]) || body[0] === 0xef) return null;
  // A raw line break can only be whitespace between tokens: such a reply is put on one line by the text path.
  if (body.indexOf(0x0a) >= 0 || body.indexOf(0x0d) >= 0) return null;
  if (scanJsonObjectLine(body, 0, end, NAMES, slots) === SCAN_NO || !isUtf8(body)) return null;
  const raw = (slot: number): string | undefined =>
    slots[2 * slot] < 0 ? undefined : body.toString('utf8', slots[2 * slot], slots[2 * slot + 1]);
  const noPersist = raw(NO_PERSIST);
  const failureClass = raw(FAILURE_CLASS);
  const reward = raw(REWARD);
  const outcome =
    noPersist !== undefined && rawTruthy(noPersist)
      ? 'drop'
      : failureClass !== undefined && failureClass !== 'null'
        ? 'failure'
        : 'success';
  // A stamp this path has no slot for (none but ATIF's, turned away above) leaves the reply to the text path.
  const assignments: Assignment[] = [];
  for (const [key, value] of stampFields(stamps)) {
    const slot = STAMP_KEYS.indexOf(key);
    if (slot < 0) return null;
    assignments.push({ slot, value: Buffer.from(value, 'utf8') });
  }
  // Called by routeResult before it returns, while `slots` still holds this reply's scan.
  const stamped = () => assignMembers(body, 0, end, NAMES, slots, assignments);
  return routeResult(
    {
      outcome,
      failureClass: failureClass === undefined ? undefined : (JSON.parse(failureClass) as unknown),
      reward: reward === undefined ? undefined : (JSON.parse(reward) as unknown),
      stamped,
    },
    row,
    rules,
  );
}
