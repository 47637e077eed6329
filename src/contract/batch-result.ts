/**
 * What one `verifyBatch` activity produced, and the per-agent counts it adds up. Types only: the workflow bundle imports
 * this file, so it must not contain runtime code.
 */
import type { BatchAudit } from './batch-audit.js';
import type { PairedWire } from './paired-wire.js';

/** Per-agent counts of committed results. */
export interface AgentCounts {
  done: number;
  failed: number;
  dropped: number;
  rewardSum: number;
  /** Re-judgments withdrawn (answered without a grade; absent: none). */
  withdrawn?: number;
}
/** What one batch produced (written to its part files, not yet committed). */
export interface BatchResult {
  batch: number;
  mainPart: string;
  sidecarPart: string;
  /** Results routed to the main output / the sidecar / nowhere (`_ng_no_persist`). */
  main: number;
  failed: number;
  dropped: number;
  /** Of `failed`: 4xx replies of /verify (`verify_rejected`). */
  rejected: number;
  /**
   * Of `failed`: verdicts the next re-judgment round plans again: `judge_failed`; with the retry
   * rules also `judge_invalid` and retried timeouts (`isRetriedNextRound`).
   */
  judgeFailed: number;
  /**
   * Re-judgments withdrawn: the verifier answered without a grade, nothing was written, the failure
   * stays selected and the next round plans it again (absent: none, or earlier versions).
   */
  withdrawn?: number;
  perAgent: Record<string, AgentCounts>;
  /** Overload signals for adaptive concurrency: 429/503 answers met (and retried) in this batch. */
  throttled: number;
  /** Sum and count of the latencies of answered `/verify` requests, in ms. */
  latencyMsSum: number;
  latencyCount: number;
  /**
   * Sums over the answered rows of their time on the judge and of their time held back by
   * throttling (429/503 waits and the process's gate): the share of its slots the batch kept busy
   * (absent: earlier versions).
   */
  busyMsSum?: number;
  throttleWaitMsSum?: number;
  /** The run's concurrency limit when the batch was launched (absent: earlier versions). */
  launchLimit?: number;
  /** `/verify` requests this activity made, every try and probe counted (absent: earlier versions). */
  requestsUsed?: number;
  /**
   * True: the batch spent its allowance before its last row. Its parts are not published (nothing
   * to commit); its checkpoint is kept in the work directory and the batch is launched again.
   */
  held?: boolean;
  /** Held: the rows answered so far (its checkpoint; the launch that goes on from it reports them again). */
  sofar?: { main: number; failed: number; dropped: number };
  /** Held because its worker stopped (Ctrl-C, `reverify worker` ending), not for the budget: a graceful stop, not a failure. */
  stopped?: boolean;
  /** Rows of the counts (or of `sofar`) answered by earlier attempts or launches of the batch (absent: none). */
  carried?: number;
  /**
   * The rows not in the main output (key, class, status, attempt) and the failed attempts of the
   * batch, for the audit (src/contract/batch-audit.ts). Absent in results of earlier versions.
   */
  audit?: BatchAudit;
  /** Rows the batch did not reach because the run was cancelled (absent when it finished them all). */
  unfinished?: number;
  /**
   * Milliseconds from the batch's last row selected for the next round (`judgeFailed`, `withdrawn`)
   * to its return: the re-judgment delay counts from there (workflows/rejudge.ts; absent: none).
   */
  selectedAgoMs?: number;
  /**
   * The batch's rows as paired old/new values per task, in plan order, for the live estimate
   * (src/stats/run-estimate.ts), in their compact form (paired-wire.ts). Absent: none (ATIF, recovery).
   */
  paired?: PairedWire;
}

/**
 * Consecutive plan rows of one agent and task within a batch: the paired values the live estimate
 * takes in (sums, never rows). `known`: rows with a new reward in the main output; `invalid`: rows
 * whose old or new reward is missing or outside [0, 1] (the estimate then stops for the agent).
 */
export interface PairedUnit {
  agent: string;
  task: string;
  rows: number;
  known: number;
  oldSum: number;
  /** New rewards of the known rows, and their flips fail → pass (`up`) and pass → fail (`down`). */
  newSum: number;
  up: number;
  down: number;
  invalid: number;
}

/** The counts of a batch's result (what its heartbeated checkpoint carries; src/cli/live-batches.ts reads them). */
export type BatchCounts = Omit<BatchResult, 'batch' | 'mainPart' | 'sidecarPart' | 'audit' | 'paired'>;
