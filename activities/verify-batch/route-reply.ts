/**
 * Where one row's result goes and how it counts (spec §1.6, §4.10): a reply's body is stamped and
 * routed to the main output, the sidecar, or nowhere; a 4xx is a `verify_rejected` sidecar row; a
 * row set aside after its strikes is a `transient` one. Pure: the batch recorder does the writing.
 */
import { FAILURE_CLASS_KEY, KILL_SHAPED_CLASS, TRANSIENT_CLASS, VERIFY_REJECTED_CLASS } from '../../src/contract/keys.js';
import {
  classifyResult,
  stampAtifFailure,
  stampResult,
  verifyFailedRow,
  verifyRejectedRow,
  type Stamps,
} from '../../src/contract/outcome.js';
import {
  invalidJudgeVerdict,
  isRetriedNextRound,
  markInvalidJudge,
  sidecarLineStops,
  withInvalidJudge,
  type RetryRules,
} from '../../src/contract/retry-rules.js';
import { isGraded, settledRow, settledSavedRow } from '../../src/contract/rejudgment.js';
import type { SettledReply } from '../../src/verifier/client.js';
import type { VerifierUnavailableError } from '../../src/verifier/errors.js';
import { agentCounts, selectForNextRound, type Checkpoint, type Counts } from './checkpoint.js';

/** A routed row: the line to write (if any), where, and how the checkpoint counts it once written. */
export interface Routed {
  target: 'main' | 'sidecar' | null;
  line: string | null;
  count: (c: Counts, cp: Checkpoint) => void;
  /** How the audit trail names a row that did not reach the main output (null: it did). */
  audit: { cls: string; status: number | null } | null;
  /** A main-output row's numeric `reward` (absent: none), for the live estimate. */
  reward?: number;
}

/** What is known of the row besides its reply. */
export interface RowFacts {
  agent: string;
  /** Its index in the round's plan (a judge failure is listed by it for the next round). */
  planIndex: number;
  /** Its time on the judge: from its first try to its answer, less `throttleWaitMs`. */
  latencyMs: number;
  /** Its time held back by throttling: at the process's gate, and waiting out 429/503s (throttle-gate.ts). */
  throttleWaitMs?: number;
  /** Tries of this row answered 429/503 (throttling signals for the adaptive limit). */
  throttled: number;
  /**
   * ATIF mode (NeMo Gym 0.7.0): a no-persist (kill-shaped) result goes to the sidecar instead of
   * nowhere, and a sidecar row without a truthy class is classed `kill_shaped`.
   */
  atif?: boolean;
  /**
   * A re-judgment (src/contract/rejudgment.ts): its operation id, and the judged body and saved row
   * a success settles from. A success without a grade is withdrawn: nothing is written.
   */
  rejudgment?: { opId: string; judged: string; saved: string; savedResult?: boolean };
}

/**
 * Routes an answered row: `ok` by its body's outcome, `rejected` (a 4xx) to the sidecar. Under
 * `--retry-invalid-judge-responses` an invalid verdict is first made a `judge_invalid` (or terminal
 * `permanent`) failure. A failure the next round retries (`isRetriedNextRound`) is listed for it.
 */
export function routeReply(reply: SettledReply, stamps: Stamps, row: RowFacts, rules: RetryRules = {}): Routed {
  if (reply.kind === 'rejected') {
    return {
      target: 'sidecar',
      line: verifyRejectedRow(stamps, reply.status, reply.excerpt),
      audit: { cls: VERIFY_REJECTED_CLASS, status: reply.status },
      count: (c) => {
        signalsCount(c, row);
        c.failed++;
        c.rejected++;
        agentCounts(c, row.agent).failed++;
      },
    };
  }
  const verdict = rules.retryInvalidJudgeResponses ? invalidJudgeVerdict(reply.result) : null;
  const result = verdict ? withInvalidJudge(reply.result, verdict) : reply.result;
  const body = verdict ? markInvalidJudge(reply.body, verdict) : reply.body;
  const outcome = classifyResult(result);
  if (row.atif && outcome !== 'success') {
    const cls = result[FAILURE_CLASS_KEY];
    return sidecarRow(
      stampAtifFailure(body, stamps),
      typeof cls === 'string' && cls !== '' ? cls : KILL_SHAPED_CLASS,
      result[FAILURE_CLASS_KEY],
      row,
      rules,
    );
  }
  const op = row.rejudgment;
  if (op && outcome === 'success') {
    // A saved result re-verified (`--rejudge-saved`) settles as the saved row with its grading replaced.
    const settled = () =>
      op.savedResult ? settledSavedRow(body, op.saved, op.opId) : settledRow(body, stamps, op.judged, op.saved, op.opId);
    if (isGraded(result)) return mainRow(settled(), result.reward, row);
    return {
      target: null,
      line: null,
      audit: { cls: 'withdrawn', status: null },
      count: (c, cp) => {
        signalsCount(c, row);
        c.withdrawn = (c.withdrawn ?? 0) + 1;
        const a = agentCounts(c, row.agent);
        a.withdrawn = (a.withdrawn ?? 0) + 1;
        // The failure stays selected: the next round judges its saved answer again (nothing was written).
        selectForNextRound(cp, row.planIndex, 'none');
      },
    };
  }
  if (outcome === 'drop') return droppedRow(row);
  const failureClass = result[FAILURE_CLASS_KEY];
  if (outcome === 'failure') return sidecarRow(stampResult(body, stamps), String(failureClass), failureClass, row, rules);
  return mainRow(stampResult(body, stamps), result.reward, row);
}

/** A no-persist result: nothing written, counted as dropped. */
function droppedRow(row: RowFacts): Routed {
  return {
    target: null,
    line: null,
    audit: { cls: 'dropped', status: null },
    count: (c) => {
      signalsCount(c, row);
      c.dropped++;
      agentCounts(c, row.agent).dropped++;
    },
  };
}

/** The latency and throttling signals of an answered row (for the adaptive limit). */
function signalsCount(c: Counts, row: RowFacts): void {
  c.throttled += row.throttled;
  c.busyMsSum = (c.busyMsSum ?? 0) + row.latencyMs;
  c.throttleWaitMsSum = (c.throttleWaitMsSum ?? 0) + (row.throttleWaitMs ?? 0);
  if (row.throttled === 0) {
    c.latencyMsSum += row.latencyMs;
    c.latencyCount++;
  }
}

/**
 * A failure's sidecar row, audited as `cls`; listed for the next round when `failureClass` is one it
 * retries, with whether the row stops its key (as the sidecar's readers will decide: `sidecarLineStops`).
 */
function sidecarRow(line: string, cls: string, failureClass: unknown, row: RowFacts, rules: RetryRules): Routed {
  const judgeFailed = isRetriedNextRound(failureClass, rules);
  const left = judgeFailed && sidecarLineStops(line, rules) ? 'terminal' : 'row';
  return {
    target: 'sidecar',
    line,
    audit: { cls, status: null },
    count: (c, cp) => {
      signalsCount(c, row);
      c.failed++;
      if (judgeFailed) {
        c.judgeFailed++;
        selectForNextRound(cp, row.planIndex, left);
      }
      agentCounts(c, row.agent).failed++;
    },
  };
}

/** A success's main-output row; a numeric `reward` adds to its agent's sum. */
function mainRow(line: string, reward: unknown, row: RowFacts): Routed {
  return {
    target: 'main',
    line,
    audit: null,
    ...(typeof reward === 'number' ? { reward } : {}),
    count: (c) => {
      signalsCount(c, row);
      c.main++;
      const a = agentCounts(c, row.agent);
      a.done++;
      if (typeof reward === 'number') a.rewardSum += reward;
    },
  };
}

/** A row set aside after its strikes: a `transient` sidecar row with the last status (null: no answer) and reason. */
export function routeSetAside(stamps: Stamps, err: VerifierUnavailableError, agent: string): Routed {
  return {
    target: 'sidecar',
    line: verifyFailedRow(stamps, err.lastStatus ?? null, err.lastExcerpt ?? err.lastReason),
    audit: { cls: TRANSIENT_CLASS, status: err.lastStatus ?? null },
    count: (c) => {
      c.failed++;
      agentCounts(c, agent).failed++;
    },
  };
}
