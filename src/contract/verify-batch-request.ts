import type { PlanSummary, RetryRules } from './run-spec.js';

/** What the workflow asks of one `verifyBatch` activity: plan rows [from, to) and how to send them. */
export interface VerifyBatchRequest {
  inputsPath: string;
  plan: Pick<PlanSummary, 'planPath' | 'sourcePath' | 'agents' | 'servers' | 'recordBytes' | 'files' | 'inputFormat'>;
  /** Resources server name -> base URL. */
  serverUrls: Record<string, string>;
  workDir: string;
  /** Re-judgment round (0 for the first pass); part of the part file names. */
  round: number;
  batch: number;
  /**
   * A re-verification of saved rows (`noise`, `saved`: workflows/reverify-selected.ts): names the
   * batch's files in the work directory instead of the round (absent: a round's batch).
   */
  tag?: string;
  /** Plan records [from, to). */
  from: number;
  to: number;
  /** `/verify` requests this batch may have in flight. */
  parallelism: number;
  /** The run's limit of requests in flight when it was launched (echoed in the result for the adaptive limit; absent: earlier versions). */
  launchLimit?: number;
  requestTimeoutMs: number;
  /**
   * `/verify` requests this activity may make, every try and probe counted (absent: no limit).
   * Spent before the last row: the batch hands the rest back (`held`), see workflows/budget.ts.
   */
  allowance?: number;
  /** When > 0: fail the run if this batch's first `rejectGuard` replies are all 4xx rejections. */
  rejectGuard: number;
  /** The run's sidecar (`<out>_failures.jsonl`), for messages; absent in runs started before it was passed. */
  outputSidecar?: string;
  /**
   * A re-judgment round (or a `--judge-failed-only` pass): the operation id prefix of its rows
   * (src/contract/rejudgment.ts). Absent: plain verification, or runs started before operations.
   */
  operation?: string;
  /** How results are routed and listed for the next round (absent: the rules off). */
  retry?: RetryRules;
  /** The run keeps a live estimate: the batch reports its rows as paired values per task (`BatchResult.paired`). */
  paired?: boolean;
}
