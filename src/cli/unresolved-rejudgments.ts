/**
 * Re-judgments whose outcome is unknown (newer NeMo Gym's `unresolved_rejudgments`): admitted — a
 * `verifyBatch` of a re-judgment round was scheduled, which the history records before the judge is
 * called — and not settled: that batch's part files were never committed. Whether their judge ran
 * is unknown; the next round, or `--resume` / `--judge-failed-only` after the run ended, judges them
 * again and settles each exactly once. Read from the current run's history (admissions and their
 * commits never span a continue-as-new: a run continues only with no batch in flight or uncommitted).
 */
import type { temporal } from '@temporalio/proto';
import { stampsFromPayload } from '../contract/outcome.js';
import { verifyRequest } from '../contract/payload.js';
import { operationId } from '../contract/rejudgment.js';
import { decode } from './history-events.js';
import { readPlanRange } from '../planning/plan-file.js';
import { readPlannedRows } from '../planning/planned-rows.js';
import type { VerifyBatchRequest } from '../contract/verify-batch-request.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** A batch of re-judgments admitted and not settled. */
export interface UnsettledBatch {
  round: number;
  batch: number;
  /** Plan rows [from, to) of its round. */
  from: number;
  to: number;
  /** The operation id prefix of its round. */
  operation: string;
  request: VerifyBatchRequest;
}

/** One re-judgment whose outcome is unknown: its operation id and key (`T:R`), or its plan row when the plan is gone. */
export interface UnresolvedRejudgment {
  operationId: string;
  key: string | null;
  round: number;
  batch: number;
}

/** The re-judgment batches the events admitted and no commit settled, in the order admitted. */
export function unsettledBatches(events: HistoryEvent[]): UnsettledBatch[] {
  const admitted = new Map<string, UnsettledBatch>();
  const commits = new Map<string, string[]>();
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const type = scheduled.activityType?.name;
      const input = decode(scheduled.input);
      if (type === 'verifyBatch') {
        const req = input as VerifyBatchRequest;
        // Launched again after it was held: one admission, the latest request.
        if (req.operation !== undefined)
          admitted.set(`${req.tag ?? `r${req.round}`}-b${req.batch}`, {
            round: req.round,
            batch: req.batch,
            from: req.from,
            to: req.to,
            operation: req.operation,
            request: req,
          });
      } else if (type === 'commitBatches') {
        commits.set(String(e.eventId), (input as { mainParts: string[] }).mainParts);
      } else if (type === 'settleSavedRows') {
        // A `--rejudge-saved` batch settles when its rows are settled in the output.
        commits.set(String(e.eventId), (input as { parts: string[] }).parts);
      }
    }
    const completed = e.activityTaskCompletedEventAttributes;
    const parts = completed ? commits.get(String(completed.scheduledEventId)) : undefined;
    for (const part of parts ?? []) {
      const name = /((?:r\d+|saved)-b\d+)\.main\.part$/.exec(part)?.[1];
      if (name !== undefined) admitted.delete(name);
    }
  }
  return [...admitted.values()];
}

/**
 * The unsettled re-judgments one by one, named by their keys read from the round's plan (as the
 * batch named them); a plan no longer on disk (the run's work directory removed) names them by plan row.
 */
export async function unresolvedRejudgments(batches: UnsettledBatch[]): Promise<UnresolvedRejudgment[]> {
  const found: UnresolvedRejudgment[] = [];
  for (const b of batches) {
    const req = b.request;
    let stamps: Array<{ task: string; rollout: string }> | null = null;
    try {
      const records = await readPlanRange(req.plan.planPath, b.from, b.to, req.plan.recordBytes);
      const read = await readPlannedRows(
        req,
        records,
        records.map((_, i) => i),
      );
      stamps = records.map((_, k) =>
        req.plan.inputFormat === 'atif' ? stampsFromPayload(read.input(k)) : verifyRequest(read.input(k), read.source(k)).stamps,
      );
    } catch {
      stamps = null;
    }
    if (stamps === null) {
      for (let row = b.from; row < b.to; row++)
        found.push({ operationId: `${b.operation}/plan-row-${row}`, key: null, round: b.round, batch: b.batch });
      continue;
    }
    for (const s of stamps)
      found.push({
        operationId: operationId(b.operation, s.task, s.rollout),
        key: `${s.task}:${s.rollout}`,
        round: b.round,
        batch: b.batch,
      });
  }
  return found;
}

/** Most re-judgments `status` lists one by one. */
const LISTED = 20;

/** The status lines: none when every admission is settled. */
export function unresolvedLines(found: UnresolvedRejudgment[], live = false): string[] {
  if (found.length === 0) return [];
  // A live run settles them itself: --resume is for a run that has ended.
  const lines = [
    `Re-judgments admitted, not settled (outcome unknown): ${found.length}: their batches were scheduled and are not committed ` +
      `(in flight, or the run ended first), so whether their judge ran is unknown; each settles at most once, ` +
      `when its batch commits or when a later round${live ? '' : ' or --resume'} judges it again`,
  ];
  for (const u of found.slice(0, LISTED))
    lines.push(`  ${u.operationId}${u.key === null ? '' : ` (key ${u.key})`}, round ${u.round + 1}, batch ${u.batch + 1}`);
  if (found.length > LISTED) lines.push(`  and ${found.length - LISTED} more (reverify status --json lists them all)`);
  return lines;
}
