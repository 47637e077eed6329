/**
 * NeMo Gym 0.7.0's two opt-in retry rules, as pure decisions (docs/compatibility.md):
 * `--retry-invalid-judge-responses` (`retry_invalid_judge_responses`: a verdict the judge gave but
 * that could not be scored is a failure, not a score) and `--retry-terminal-timeouts`
 * (`retry_terminal_timeouts`: terminal timeouts and repairable environment faults are retried).
 */
import { setFields, topLevelSpans } from './json-spans.js';
import {
  FAILURE_CLASS_KEY,
  FAILURE_TERMINAL_KEY,
  INVALID_JUDGE_RESPONSE_KEY,
  INVALID_JUDGE_RETRYABLE_KEY,
  JUDGE_FAILED_CLASS,
  JUDGE_INVALID_CLASS,
  OMITTED_KEY,
  PERMANENT_CLASS,
  REPAIRABLE_ENVIRONMENT_CLASSES,
  SKIPPED_CLASS,
  TIMEOUT_EXCEEDED_CLASS,
} from './keys.js';
import { pyTruthy, rawTruthy } from './python-truthiness.js';
import type { RetryRules } from './run-spec.js';

export type { RetryRules } from './run-spec.js';

/** How an invalid verdict is recorded: its failure class, and whether it is terminal. */
export interface InvalidJudgeVerdict {
  failureClass: typeof JUDGE_INVALID_CLASS | typeof PERMANENT_CLASS;
  terminal: boolean;
}

/**
 * The failure a `/verify` result stands for under `--retry-invalid-judge-responses`, or null: only
 * a result with a truthy `invalid_judge_response` and no failure class (absent or null) is one. It
 * is `judge_invalid` (retried like a judge failure) unless `invalid_judge_retryable` is exactly
 * `false`: then `permanent` and terminal.
 */
export function invalidJudgeVerdict(result: Record<string, unknown>): InvalidJudgeVerdict | null {
  if (!pyTruthy(result[INVALID_JUDGE_RESPONSE_KEY])) return null;
  if (result[FAILURE_CLASS_KEY] !== undefined && result[FAILURE_CLASS_KEY] !== null) return null;
  const retryable = result[INVALID_JUDGE_RETRYABLE_KEY] !== false;
  return { failureClass: retryable ? JUDGE_INVALID_CLASS : PERMANENT_CLASS, terminal: !retryable };
}

/**
 * The result text with the verdict's fields assigned (a key the result already has, such as
 * `"_ng_failure_class":null`, keeps its place; new keys go at the end, class first), the rest kept
 * byte for byte.
 */
export function markInvalidJudge(resultRaw: string, verdict: InvalidJudgeVerdict): string {
  const fields: Array<[string, string]> = [[FAILURE_CLASS_KEY, JSON.stringify(verdict.failureClass)]];
  if (verdict.terminal) fields.push([FAILURE_TERMINAL_KEY, 'true']);
  return setFields(resultRaw, fields);
}

/** The parsed result as it reads once the verdict's fields are assigned. */
export function withInvalidJudge(result: Record<string, unknown>, verdict: InvalidJudgeVerdict): Record<string, unknown> {
  return { ...result, [FAILURE_CLASS_KEY]: verdict.failureClass, ...(verdict.terminal ? { [FAILURE_TERMINAL_KEY]: true } : {}) };
}

/** Whether `--retry-terminal-timeouts` retries a failure of this class even when it is stamped terminal. */
export function isRetriedTimeout(failureClass: unknown): boolean {
  return failureClass === TIMEOUT_EXCEEDED_CLASS || REPAIRABLE_ENVIRONMENT_CLASSES.includes(failureClass as string);
}

/**
 * Whether a sidecar row stops its key from being retried (resume and re-judgment rounds). Without
 * `--retry-terminal-timeouts`: iff it is stamped `_ng_failure_terminal` (truthy). With it:
 * `timeout_exceeded` and the repairable environment classes never are, `skipped` always is, any
 * other class iff stamped. The attempt cap applies either way.
 */
export function isTerminalFailure(failureClass: unknown, stampedTerminal: boolean, rules: RetryRules): boolean {
  if (!rules.retryTerminalTimeouts) return stampedTerminal;
  if (isRetriedTimeout(failureClass)) return false;
  if (failureClass === SKIPPED_CLASS) return true;
  return stampedTerminal;
}

/**
 * Whether a sidecar row stops its key, from the raw JSON texts of its `_ng_failure_terminal`,
 * `_ng_omitted` and `_ng_failure_class` members (`null` when absent): an omission always does (it
 * is never retried), any other row as `isTerminalFailure` says. The readers of a sidecar
 * (src/planning/output-cache.ts) and the batch that writes a failure selected for the next round
 * (activities/verify-batch/route-reply.ts) decide with this one rule.
 */
export function sidecarRowStops(rawTerminal: string, rawOmitted: string, rawClass: string, rules: RetryRules): boolean {
  if (rawTruthy(rawOmitted)) return true;
  // The class is parsed only when it can matter (parsing it for every line of a big sidecar is waste).
  const failureClass = rules.retryTerminalTimeouts ? (JSON.parse(rawClass) as unknown) : undefined;
  return isTerminalFailure(failureClass, rawTruthy(rawTerminal), rules);
}

/** `sidecarRowStops` of one sidecar line (a JSON object's text). */
export function sidecarLineStops(line: string, rules: RetryRules): boolean {
  const spans = topLevelSpans(line);
  const raw = (key: string) => {
    const span = spans.get(key);
    return span === undefined ? 'null' : line.slice(span.start, span.end);
  };
  return sidecarRowStops(raw(FAILURE_TERMINAL_KEY), raw(OMITTED_KEY), raw(FAILURE_CLASS_KEY), rules);
}

/**
 * The failure classes `--judge-failed-only` recovers: `judge_failed`; `judge_invalid` too with
 * `--retry-invalid-judge-responses` (0.7.0 always recovers both; the seed API page calls
 * `judge_failed` the only one, which we keep without the flag).
 */
export function isRecoveredClass(failureClass: unknown, rules: RetryRules): boolean {
  return failureClass === JUDGE_FAILED_CLASS || (rules.retryInvalidJudgeResponses === true && failureClass === JUDGE_INVALID_CLASS);
}

/**
 * Whether a failed verdict is planned again by the next re-judgment round (which then keeps it only
 * while its key has attempts left and no terminal row): the classes a repeated `--resume` with the
 * same flags would retry and that a new request can fix — judge failures, and with the flags also
 * `judge_invalid` and the retried timeouts.
 */
export function isRetriedNextRound(failureClass: unknown, rules: RetryRules): boolean {
  return isRecoveredClass(failureClass, rules) || (rules.retryTerminalTimeouts === true && isRetriedTimeout(failureClass));
}
