/**
 * Before the first batch of a run that keeps a live estimate: the units the estimate samples
 * (runs of consecutive plan rows of one agent and task, src/stats/run-estimate.ts) counted per
 * agent, with their rows, the rows of the largest, and the sum of the old rewards (the old mean is
 * exact: every old reward is in --rollouts). One pass over the plan and the planned source rows,
 * each proven by its digest (count-paired-units/segment.ts); a large plan's second half is counted
 * on a thread, on the second core (10^7 rows: 32–38 s, against 69–75 s on one thread reading each
 * row as a string; bench/first-request.ts).
 */
import type { Worker, WorkerOptions } from 'node:worker_threads';
import { startThread } from '../src/io/start-thread.js';
import type { PlannedUnits } from '../src/stats/run-estimate.js';
import { countSegment, joinSegments, type CountedPlan, type UnitSegment } from './count-paired-units/segment.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

/** Plans of fewer rows are counted on the activity's thread alone (a thread's start costs ≈ 0.1 s). */
const THREAD_MIN_ROWS = 100_000;

/**
 * The thread's young generation, in MiB: its rows are short-lived garbage (views, decoded values,
 * plan records), and at V8's own size the thread took the worker of a 10^7-row run from 273 to 302
 * MiB.
 */
const THREAD_LIMITS: WorkerOptions['resourceLimits'] = { maxYoungGenerationSizeMb: 4 };

export interface CountPairedUnitsRequest {
  plan: CountedPlan;
  /** Plans of fewer rows are counted on one thread (default 100,000; tests make it small). */
  threadMinRows?: number;
}

/** Units per agent name. */
export async function countPairedUnits(req: CountPairedUnitsRequest): Promise<Record<string, PlannedUnits>> {
  const done = [0, 0];
  // A row changed since the plan stops the run with its one line (not retried: it would not change back).
  return failFastOnUserError(() =>
    whileHeartbeating(
      () => countUnits(req.plan, req.threadMinRows ?? THREAD_MIN_ROWS, done),
      () => ({ rows: done[0] + done[1], of: req.plan.rows }),
    ),
  );
}

/** The plan's units; `done[0]` and `done[1]`: rows counted of its first and second half. */
async function countUnits(plan: CountedPlan, threadMinRows: number, done: number[]): Promise<Record<string, PlannedUnits>> {
  const mid = plan.rows < threadMinRows ? plan.rows : Math.floor(plan.rows / 2);
  const second = mid < plan.rows ? countOnThread(plan, mid, (rows) => (done[1] = rows)) : null;
  let first: UnitSegment;
  try {
    first = await countSegment(plan, 0, mid, (rows) => (done[0] = rows));
  } catch (err) {
    // The count fails (a row changed since the plan): the thread's half is not waited for.
    second?.stop();
    throw err;
  }
  // Counted here when the thread gave no count (it could not start, or failed).
  const rest = (await second?.segment) ?? (second ? await countSegment(plan, mid, plan.rows, (rows) => (done[1] = rows)) : null);
  return (rest ? joinSegments(first, rest) : first).perAgent;
}

/** Plan rows from `from` to the end counted on a thread: its count (null when it gave none), and a stop. */
export function countOnThread(
  plan: CountedPlan,
  from: number,
  progress: (rows: number) => void,
): { segment: Promise<UnitSegment | null>; stop: () => void } {
  let thread: Worker | null = null;
  const segment = new Promise<UnitSegment | null>((resolve) => {
    try {
      thread = startThread(import.meta.url, 'count-paired-units-thread', {
        workerData: { plan, from, to: plan.rows },
        resourceLimits: THREAD_LIMITS,
      });
      thread.on('message', (m: { rows: number } | { segment: UnitSegment }) => ('segment' in m ? resolve(m.segment) : progress(m.rows)));
      thread.once('error', () => resolve(null));
      thread.once('exit', () => resolve(null));
    } catch {
      resolve(null);
    }
  });
  return { segment, stop: () => void thread?.terminate() };
}
