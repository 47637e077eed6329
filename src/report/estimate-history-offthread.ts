/**
 * The report's replay of the live estimate (estimate-history.ts) on a thread of its own. The replay
 * makes some 30 short-lived objects a unit (10^7 rows: 2.5 × 10^6 units, 10–18 s): on the command's
 * thread, V8 grows its young generation to the maximum for it and promotes part of that garbage,
 * +50 MiB of heap at the report's peak. The thread's young generation is capped (`THREAD_LIMITS`),
 * and it runs beside the report's other numbers, on the second core. It reads the join's columns
 * where they are (shared memory: number-column.ts) and posts back the history (100 points).
 */
import type { WorkerOptions } from 'node:worker_threads';
import { startThread } from '../io/start-thread.js';
import { estimateHistoryOf, type EstimateHistory, type JoinOrder } from './estimate-history.js';

/**
 * The thread's young generation, in MiB. Measured on a replay of 10^7 rows (2.5 × 10^6 units): the
 * process's RSS grew by 44 MiB at 4, 56 at 8, 94 at V8's own size (48); 17.6, 16.9 and 16.8 s.
 */
const THREAD_LIMITS: WorkerOptions['resourceLimits'] = { maxYoungGenerationSizeMb: 4 };

/** What the thread is given: only the join's order and its paired columns (the rest is not cloned). */
function replayed(join: JoinOrder): JoinOrder {
  return {
    order: join.order,
    taskOrder: join.taskOrder,
    agents: join.agents.map((a) => ({ agent: a.agent, oldRewards: a.oldRewards, newRewards: a.newRewards, taskIds: a.taskIds })),
  };
}

/** The thread's answer, or null when it gave none (it could not start, or ended without one). */
export function replayOnThread(join: JoinOrder, confidence: number): Promise<{ history: EstimateHistory | null } | null> {
  return new Promise((resolve) => {
    try {
      const thread = startThread(import.meta.url, 'estimate-history-thread', {
        workerData: { join: replayed(join), confidence },
        resourceLimits: THREAD_LIMITS,
      });
      thread.once('message', (history: EstimateHistory | null) => resolve({ history }));
      thread.once('error', () => resolve(null));
      thread.once('exit', () => resolve(null));
    } catch {
      resolve(null);
    }
  });
}

/**
 * `estimateHistoryOf(join, confidence)`, computed on a thread; on this thread when the thread gave
 * no answer (the same numbers either way).
 */
export async function estimateHistoryOffThread(join: JoinOrder, confidence: number): Promise<EstimateHistory | null> {
  const answer = await replayOnThread(join, confidence);
  return answer ? answer.history : estimateHistoryOf(join, confidence);
}
