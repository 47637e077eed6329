/**
 * A run's live state as every view shows it (the terminal's progress line, `reverify status` and
 * `--json`, `reverify list`, the workflow's details in the Temporal UI): one function from the
 * workflow's progress answer and the checkpoints of its running batches. Pure: the workflow uses it
 * too (without checkpoints, which it cannot see).
 *
 * A batch's rows are counted exactly once: by its last checkpoint while it runs, by its result from
 * the moment it ends (`landed`, until its commit adds them to the totals), then by the totals; a
 * held batch (stopped with its worker, or out of budget) by what it had answered (`held`, `sofar`)
 * until the launch that goes on from it sends its own checkpoint. A
 * checkpoint is used only for a batch the progress answer lists as running in the same round, so
 * the checkpoints must be read BEFORE the progress is asked (a batch that ended in between is
 * counted by its result, never twice).
 */
import type { Phase, Progress } from './run-spec.js';

/** What a running batch's last checkpoint says (its heartbeat): which batch, and its counts. */
export interface BatchBeat {
  round: number;
  batch: number;
  main: number;
  failed: number;
  dropped: number;
  /** `/verify` requests it made, every try. */
  requests: number;
}

/** Counts of rows answered: by outcome, and the `/verify` requests that answered them. */
export interface RowCounts {
  main: number;
  failed: number;
  dropped: number;
  requests: number;
}

export const NO_ROWS: RowCounts = { main: 0, failed: 0, dropped: 0, requests: 0 };

export interface RunView {
  phase: Phase;
  /** Re-judgment round (0: the first pass). */
  round: number;
  /** Attempts planned over all rounds. */
  planned: number;
  /** Rollouts (keys) the run covers, and those whose attempt of the current round is answered. */
  keys: number;
  settled: number;
  /** Attempts answered, whatever their outcome (scored + failed + not persisted), never above `planned`. */
  answered: number;
  scored: number;
  /** Routed to the failures sidecar. */
  failed: number;
  notPersisted: number;
  /** Rows whose `/verify` request may be in flight: at most the limit in force. */
  inFlight: number;
  /** `/verify` requests made (committed, ended and running batches), and the budget (null: none). */
  requests: { used: number; max: number | null };
}

/** Sums counts. */
export function addRows(a: RowCounts, b: RowCounts): RowCounts {
  return { main: a.main + b.main, failed: a.failed + b.failed, dropped: a.dropped + b.dropped, requests: a.requests + b.requests };
}

/** The run's view from its progress answer and the checkpoints read just before it. */
export function runView(p: Progress, beats: readonly BatchBeat[] = []): RunView {
  const running = new Map((p.running ?? []).map((b) => [b.batch, b]));
  let live = addRows(p.landed ?? NO_ROWS, p.held ?? NO_ROWS);
  let inFlight = 0;
  const seen = new Set<number>();
  for (const beat of beats) {
    if (beat.round !== p.round || !running.has(beat.batch) || seen.has(beat.batch)) continue;
    seen.add(beat.batch);
    live = addRows(live, beat);
    const b = running.get(beat.batch)!;
    inFlight += Math.max(0, Math.min(b.slots, b.rows - (beat.main + beat.failed + beat.dropped)));
  }
  // A batch with no checkpoint yet: all its lanes may be out; a held one launched again counts what it had answered.
  for (const b of running.values())
    if (!seen.has(b.batch)) {
      const sofar = b.sofar ?? NO_ROWS;
      live = addRows(live, sofar);
      inFlight += Math.max(0, Math.min(b.slots, b.rows - (sofar.main + sofar.failed + sofar.dropped)));
    }
  const answered = Math.min(p.planned, p.done + p.failed + p.dropped + live.main + live.failed + live.dropped);
  const keys = p.keys ?? p.planned;
  return {
    phase: p.phase,
    round: p.round,
    planned: p.planned,
    keys,
    settled: Math.max(0, Math.min(keys, keys - (p.planned - answered))),
    answered,
    scored: Math.min(answered, p.done + live.main),
    failed: Math.min(answered, p.failed + live.failed),
    notPersisted: Math.min(answered, p.dropped + live.dropped),
    inFlight: Math.min(inFlight, p.effectiveConcurrency),
    requests: { used: (p.requests?.used ?? 0) + live.requests, max: p.requests?.max ?? null },
  };
}

/**
 * A view that never goes back from the one shown before it (a view read later may lag one read
 * earlier by a checkpoint): its counts are the larger of both.
 */
export function steadyView(before: RunView | null, now: RunView): RunView {
  if (before === null) return now;
  const answered = Math.min(now.planned, Math.max(before.answered, now.answered));
  const keys = now.keys;
  return {
    ...now,
    answered,
    settled: Math.max(0, Math.min(keys, keys - (now.planned - answered))),
    scored: Math.max(before.scored, now.scored),
    failed: Math.max(before.failed, now.failed),
    notPersisted: Math.max(before.notPersisted, now.notPersisted),
    requests: { ...now.requests, used: Math.max(before.requests.used, now.requests.used) },
  };
}

/** Seconds left at `rate` attempts per second (null: no rate yet). */
export function etaSeconds(v: RunView, rate: number): number | null {
  return rate > 0 ? Math.round((v.planned - v.answered) / rate) : null;
}
