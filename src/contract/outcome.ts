/**
 * What happens to one `/verify` result (spec §1.6, §4.10, §7 "Routing outcomes of odd result
 * bodies"), and the stamps copied onto it from the payload, on raw text.
 */
import { setFields, topLevelSpans, type Span } from './json-spans.js';
import {
  AGENT_REF_KEY,
  ATIF_PROVENANCE_KEY,
  ENVIRONMENT_SERVER_KEY,
  FAILURE_CLASS_KEY,
  FAILURE_TERMINAL_KEY,
  KILL_SHAPED_CLASS,
  NO_PERSIST_KEY,
  ROLLOUT_INDEX_KEY,
  SKILLS_REF_KEY,
  TASK_INDEX_KEY,
  TASK_SOURCE_KEY,
  TRANSIENT_CLASS,
  VERIFY_REJECTED_CLASS,
} from './keys.js';
import { pyTruthy, rawTruthy } from './python-truthiness.js';
import { isRecoveredClass, type RetryRules } from './retry-rules.js';

/** Where a result goes: nowhere, the `_failures.jsonl` sidecar, or the main output. */
export type Outcome = 'drop' | 'failure' | 'success';

/**
 * Routes a parsed result body: `_ng_no_persist` truthy (Python truthiness) -> `drop`, even with a
 * failure class; else `_ng_failure_class` present and not `null` (any value, even `""`) ->
 * `failure`; else `success` (`_ng_failure_terminal` without a class is a success).
 */
export function classifyResult(result: Record<string, unknown>): Outcome {
  if (pyTruthy(result[NO_PERSIST_KEY])) return 'drop';
  const cls = result[FAILURE_CLASS_KEY];
  return cls !== undefined && cls !== null ? 'failure' : 'success';
}

/** `classifyResult` on the raw result text, without parsing the rest of the body. */
export function classifyResultRaw(resultRaw: string): Outcome {
  const spans = topLevelSpans(resultRaw);
  const raw = (key: string): string | undefined => {
    const s = spans.get(key);
    return s === undefined ? undefined : resultRaw.slice(s.start, s.end);
  };
  const noPersist = raw(NO_PERSIST_KEY);
  if (noPersist !== undefined && rawTruthy(noPersist)) return 'drop';
  const cls = raw(FAILURE_CLASS_KEY);
  return cls !== undefined && cls !== 'null' ? 'failure' : 'success';
}

/**
 * Whether a sidecar row is a judge failure that `--judge-failed-only` recovers (§4.6.4, §6 checks
 * 39–42): `_ng_failure_class == "judge_failed"`, or `"judge_invalid"` under
 * `--retry-invalid-judge-responses` (`isRecoveredClass`); the legacy boolean
 * `_ng_failure_judge_failed` is ignored.
 */
export function isJudgeFailure(row: Record<string, unknown>, rules: RetryRules = {}): boolean {
  return isRecoveredClass(row[FAILURE_CLASS_KEY], rules);
}

/** Raw JSON texts of the payload values stamped onto each result (spec §4.10.1, NeMo Gym 0.7.0). */
export interface Stamps {
  task: string;
  rollout: string;
  /** Only when the payload has `agent_ref` (a materialized task row routed by its environment server may not). */
  agentRef?: string;
  /** Only when the payload has `_ng_environment_server`. */
  environmentServer?: string;
  /** Only when the payload has `skills_ref`. */
  skillsRef?: string;
  /** Only when the payload has `task_source` (newer NeMo Gym keeps it for aggregation routing). */
  taskSource?: string;
  /** ATIF mode: the `_ng_atif_provenance` object of the row's trajectory (never sent to `/verify`). */
  atifProvenance?: string;
}

/**
 * The stamps of a payload (the `/verify` body, or its row before `response` is set): raw texts of
 * `_ng_task_index`, `_ng_rollout_index`, and `agent_ref` / `_ng_environment_server` / `task_source` /
 * `skills_ref` when present. Throws if an index is missing (rows are validated before payloads are built).
 */
export function stampsFromPayload(payloadRaw: string): Stamps {
  return stampsFromSpans(payloadRaw, topLevelSpans(payloadRaw));
}

/** `stampsFromPayload` with the payload's top-level spans already scanned. */
export function stampsFromSpans(payloadRaw: string, spans: Map<string, Span>): Stamps {
  const raw = (key: string): string | undefined => {
    const s = spans.get(key);
    return s === undefined ? undefined : payloadRaw.slice(s.start, s.end);
  };
  const task = raw(TASK_INDEX_KEY);
  const rollout = raw(ROLLOUT_INDEX_KEY);
  if (task === undefined || rollout === undefined) {
    const missing = [TASK_INDEX_KEY, ROLLOUT_INDEX_KEY].filter((k) => !spans.has(k));
    throw new Error(`payload has no ${missing.join(', ')}: validate materialized input rows before building payloads`);
  }
  const stamps: Stamps = { task, rollout };
  const optional: Array<[keyof Stamps, string]> = [
    ['agentRef', AGENT_REF_KEY],
    ['environmentServer', ENVIRONMENT_SERVER_KEY],
    ['skillsRef', SKILLS_REF_KEY],
    ['taskSource', TASK_SOURCE_KEY],
  ];
  for (const [field, key] of optional) {
    const value = raw(key);
    if (value !== undefined) stamps[field] = value;
  }
  return stamps;
}

/**
 * The stamps as ordered fields, in NeMo Gym 0.7.0's order: task, rollout, then when present
 * agent_ref, _ng_environment_server, task_source, skills_ref, ATIF provenance.
 */
export function stampFields(stamps: Stamps): Array<[string, string]> {
  const fields: Array<[string, string]> = [
    [TASK_INDEX_KEY, stamps.task],
    [ROLLOUT_INDEX_KEY, stamps.rollout],
  ];
  if (stamps.agentRef !== undefined) fields.push([AGENT_REF_KEY, stamps.agentRef]);
  if (stamps.environmentServer !== undefined) fields.push([ENVIRONMENT_SERVER_KEY, stamps.environmentServer]);
  if (stamps.taskSource !== undefined) fields.push([TASK_SOURCE_KEY, stamps.taskSource]);
  if (stamps.skillsRef !== undefined) fields.push([SKILLS_REF_KEY, stamps.skillsRef]);
  if (stamps.atifProvenance !== undefined) fields.push([ATIF_PROVENANCE_KEY, stamps.atifProvenance]);
  return fields;
}

/**
 * The result body with the payload's stamps assigned (Python-dict semantics): a key the resources
 * server already returned is overwritten in place, a new one is appended. The rest of the body is
 * kept byte for byte.
 */
export function stampResult(resultRaw: string, stamps: Stamps): string {
  return setFields(resultRaw, stampFields(stamps));
}

/**
 * ATIF mode (NeMo Gym 0.7.0): a result bound for the sidecar — a failure, or a no-persist result,
 * which this mode keeps since it cannot resume — stamped, with its failure class set to
 * `kill_shaped` when it has none or a falsy one (Python's `failure_class or "kill_shaped"`).
 */
export function stampAtifFailure(resultRaw: string, stamps: Stamps): string {
  const cls = topLevelSpans(resultRaw).get(FAILURE_CLASS_KEY);
  const truthy = cls !== undefined && rawTruthy(resultRaw.slice(cls.start, cls.end));
  return setFields(resultRaw, [
    ...stampFields(stamps),
    ...(truthy ? [] : [[FAILURE_CLASS_KEY, `"${KILL_SHAPED_CLASS}"`] as [string, string]]),
  ]);
}

/** Longest `verify_error` excerpt kept in a `verify_rejected` row, in characters. */
export const VERIFY_ERROR_MAX_CHARS = 500;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Ours (NeMo Gym aborts the run instead, spec §8.1): the sidecar row for a 4xx reply of `/verify`:
 * `{"reward":0.0,"_ng_failure_class":"verify_rejected","_ng_failure_terminal":true,
 * "verify_status":<status>,"verify_error":"<excerpt>", <stamps>}`. Terminal, so `--resume` does not
 * retry it (a 4xx does not heal by itself). The excerpt is cut to 500 characters (never inside a
 * surrogate pair); lone surrogates become U+FFFD so Python readers accept the line.
 */
export function verifyRejectedRow(stamps: Stamps, status: number, bodyExcerpt: string): string {
  return verifyErrorRow(`"${FAILURE_CLASS_KEY}":"${VERIFY_REJECTED_CLASS}","${FAILURE_TERMINAL_KEY}":true`, stamps, status, bodyExcerpt);
}

/**
 * Ours: the sidecar row for a row whose `/verify` kept failing (5xx, connection reset, timeout)
 * while the same server answered other rows (a request the server cannot handle, not an outage):
 * `{"reward":0.0,"_ng_failure_class":"transient","verify_status":<status or null>,
 * "verify_error":"<excerpt or reason>", <stamps>}`. `transient` is NeMo Gym's class for verify-side
 * failures; not terminal, so it counts as one attempt and `--resume` tries the row again (up to
 * `--max-attempts`). `status` is null when the server never answered (reset, timeout).
 */
export function verifyFailedRow(stamps: Stamps, status: number | null, bodyExcerpt: string): string {
  return verifyErrorRow(`"${FAILURE_CLASS_KEY}":"${TRANSIENT_CLASS}"`, stamps, status, bodyExcerpt);
}

function verifyErrorRow(failureFields: string, stamps: Stamps, status: number | null, bodyExcerpt: string): string {
  // 2*N+2 code units always hold more than N code points, so the cut below decides the length.
  const chars = Array.from(bodyExcerpt.slice(0, 2 * VERIFY_ERROR_MAX_CHARS + 2).replace(LONE_SURROGATE, '\uFFFD'));
  const excerpt = chars.length > VERIFY_ERROR_MAX_CHARS ? chars.slice(0, VERIFY_ERROR_MAX_CHARS).join('') : chars.join('');
  const head = `{"reward":0.0,${failureFields},"verify_status":${status === null ? 'null' : Math.trunc(status)},"verify_error":${JSON.stringify(excerpt)}`;
  return (
    head +
    stampFields(stamps)
      .map(([k, v]) => `,${JSON.stringify(k)}:${v}`)
      .join('') +
    '}'
  );
}
