/** A batch's checkpoint (sent with its heartbeats) and the counts it carries. */
import { stat } from 'node:fs/promises';
import { emptyAudit, type BatchAudit } from '../../src/contract/batch-audit.js';
import type { AgentCounts, BatchCounts } from '../../src/contract/run-spec.js';
import type { SidecarLeft } from '../../src/planning/plan-attempts.js';
import type { PairedRow } from './paired-units.js';

/** Checkpoint sent with heartbeats: which rows are in the partial files, and how long those are. */
export interface Checkpoint {
  done: number[];
  /** Plan indices whose verdict was `judge_failed` (candidates for the next re-judgment round). */
  judgeFailedRows: number[];
  /**
   * Of those, the rows whose attempt left no sidecar row (a withdrawn re-judgment), and the rows
   * whose sidecar row stops their key under the retry rules (src/planning/rejudge-list.ts; absent
   * in checkpoints of earlier versions: none).
   */
  withdrawnRows?: number[];
  terminalRows?: number[];
  /** When the last of them was selected (epoch ms, the worker's clock: a batch retried on another machine compares two; absent: none yet). */
  lastSelectedAt?: number;
  mainBytes: number;
  sidecarBytes: number;
  counts: BatchCounts;
  /** Row index -> attempts in which the row failed with 5xx while the server answered another row. */
  strikes: Record<number, number>;
  /** The rows not routed to the main output and the failed attempts (absent in checkpoints of earlier versions). */
  audit?: BatchAudit;
  /** `/verify` requests this activity made, every try and probe (allowance.ts); absent in earlier versions. */
  requestsUsed?: number;
  /** The batch's round and number, for the live views (absent in checkpoints of earlier versions). */
  round?: number;
  batch?: number;
  /** The rows answered as paired values for the live estimate, by index in the batch (absent: not asked for). */
  paired?: Record<number, PairedRow>;
}

export function emptyCounts(): Counts {
  return {
    main: 0,
    failed: 0,
    dropped: 0,
    rejected: 0,
    judgeFailed: 0,
    perAgent: {},
    throttled: 0,
    latencyMsSum: 0,
    latencyCount: 0,
    busyMsSum: 0,
    throttleWaitMsSum: 0,
  };
}

export function agentCounts(c: Checkpoint['counts'], agent: string): AgentCounts {
  return (c.perAgent[agent] ??= { done: 0, failed: 0, dropped: 0, rewardSum: 0 });
}

/** Rows answered (scored, failed or not persisted) in counts. */
export function rowsOf(c: Pick<Counts, 'main' | 'failed' | 'dropped'>): number {
  return c.main + c.failed + c.dropped;
}

/**
 * Selects a row for the next re-judgment round, with what its attempt left in the sidecar, noting
 * when (the round's delay counts from its last one).
 */
export function selectForNextRound(cp: Checkpoint, planIndex: number, left: SidecarLeft): void {
  cp.judgeFailedRows.push(planIndex);
  if (left === 'none') (cp.withdrawnRows ??= []).push(planIndex);
  if (left === 'terminal') (cp.terminalRows ??= []).push(planIndex);
  cp.lastSelectedAt = Date.now();
}

/** Counts of a batch, as its result reports them. */
export type Counts = Checkpoint['counts'];

/** The checkpoint a new attempt starts from: the last one heartbeated, if its partial files still hold it. */
export async function resumeCheckpoint(details: unknown, mainPartial: string, sidecarPartial: string): Promise<Checkpoint> {
  let cp = details as Checkpoint | undefined;
  if (cp && !(await partialsCover(mainPartial, sidecarPartial, cp))) cp = undefined;
  const checkpoint: Checkpoint = cp ?? { done: [], judgeFailedRows: [], mainBytes: 0, sidecarBytes: 0, counts: emptyCounts(), strikes: {} };
  checkpoint.strikes ??= {}; // checkpoints of earlier versions
  // The failed attempts stay listed even when the partial files are gone and the rows start again.
  const audit = emptyAudit();
  audit.failedAttempts = (details as Checkpoint | undefined)?.audit?.failedAttempts ?? [];
  audit.failedAttemptsMore = (details as Checkpoint | undefined)?.audit?.failedAttemptsMore ?? 0;
  if (cp?.audit) {
    audit.notMain = cp.audit.notMain;
    audit.notMainMore = cp.audit.notMainMore;
  }
  checkpoint.audit = audit;
  return checkpoint;
}

/** True if the partial files still hold at least what the checkpoint says was written. */
async function partialsCover(mainPartial: string, sidecarPartial: string, cp: Checkpoint): Promise<boolean> {
  try {
    const [m, s] = await Promise.all([stat(mainPartial), stat(sidecarPartial)]);
    return m.size >= cp.mainBytes && s.size >= cp.sidecarBytes;
  } catch {
    return false;
  }
}
