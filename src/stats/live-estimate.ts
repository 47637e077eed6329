/**
 * One agent's (or the whole run's) live paired estimate: four confidence sequences for sampling
 * without replacement (wor-cs.ts), one value per task, fed in the plan's random task order:
 * - newMean: the task's mean new reward, in [a, b];
 * - delta:   the task's mean of new − old over its rollouts, in [a − b, b − a];
 * - up/down: the share of its rollouts that went fail → pass / pass → fail, in [0, 1].
 * (The old mean needs no interval: every old reward is known before the run.)
 * A task with rows not known yet (in flight, or judge failures not yet re-judged) enters with the
 * range of each value over every reward those rows may get (task-values.ts: the worst case, never
 * dropped), is narrowed as rows come back and resolved when all are in.
 * Method, assumptions and sources: wor-cs.ts (Waudby-Smith & Ramdas 2020); equal task weight.
 * State: plain JSON numbers, safe in workflow state; a pending task's tokens are the caller's to keep.
 */
import type { PairedUnit } from '../contract/batch-result.js';
import { addPending, addValue, createWorCs, interval, narrowPending, resolvePending } from './wor-cs.js';
import type { IntervalEstimate, PendingToken, WorCsState } from './wor-cs.js';

/**
 * What is known of one task: its rows, those with a new verdict (the others are in flight or judge
 * failures), and sums over them (the fields of a batch's paired unit, src/contract/batch-result.ts).
 */
export type TaskRows = Omit<PairedUnit, 'agent' | 'task' | 'invalid'>;

export interface LiveEstimate<T = WorCsState> {
  newMean: T;
  delta: T;
  up: T;
  down: T;
}

const KEYS = ['newMean', 'delta', 'up', 'down'] as const;

/** Four sequences for `tasks` planned tasks with rewards in [lower, upper] (default [0, 1]). */
export function createLiveEstimate(tasks: number, alpha: number, lower = 0, upper = 1): LiveEstimate {
  const span = upper - lower;
  return {
    newMean: createWorCs({ populationSize: tasks, lower, upper, alpha }),
    delta: createWorCs({ populationSize: tasks, lower: -span, upper: span, alpha }),
    up: createWorCs({ populationSize: tasks, lower: 0, upper: 1, alpha }),
    down: createWorCs({ populationSize: tasks, lower: 0, upper: 1, alpha }),
  };
}

/** Each value's range for what is known of `t` (a point when every row is known). */
export function taskRanges(t: TaskRows, lower = 0, upper = 1): LiveEstimate<{ lo: number; hi: number }> {
  if (!(t.rows > 0) || t.known < 0 || t.known > t.rows) {
    throw new RangeError(`live estimate: a task of ${t.rows} rows cannot have ${t.known} known`);
  }
  const unknown = t.rows - t.known;
  const newLo = (t.newSum + unknown * lower) / t.rows;
  const newHi = (t.newSum + unknown * upper) / t.rows;
  const oldMean = t.oldSum / t.rows;
  return {
    newMean: { lo: newLo, hi: newHi },
    delta: { lo: newLo - oldMean, hi: newHi - oldMean },
    up: { lo: t.up / t.rows, hi: (t.up + unknown) / t.rows },
    down: { lo: t.down / t.rows, hi: (t.down + unknown) / t.rows },
  };
}

/**
 * Feeds the next task of the order. Returns null when all its rows are known, else the tokens to
 * pass to `updateTask` when more of its rows come back.
 */
export function addTask(est: LiveEstimate, t: TaskRows): LiveEstimate<PendingToken> | null {
  const lower = est.newMean.lower;
  const r = taskRanges(t, lower, est.newMean.upper);
  if (t.known === t.rows) {
    for (const k of KEYS) addValue(est[k], r[k].lo);
    return null;
  }
  return {
    newMean: addPending(est.newMean, r.newMean.lo, r.newMean.hi),
    delta: addPending(est.delta, r.delta.lo, r.delta.hi),
    up: addPending(est.up, r.up.lo, r.up.hi),
    down: addPending(est.down, r.down.lo, r.down.hi),
  };
}

/** More of a pending task's rows are known: narrows it, or resolves it when all are in (then null). */
export function updateTask(est: LiveEstimate, tokens: LiveEstimate<PendingToken>, t: TaskRows): LiveEstimate<PendingToken> | null {
  const r = taskRanges(t, est.newMean.lower, est.newMean.upper);
  if (t.known === t.rows) {
    for (const k of KEYS) resolvePending(est[k], tokens[k], r[k].lo);
    return null;
  }
  return {
    newMean: narrowPending(est.newMean, tokens.newMean, r.newMean.lo, r.newMean.hi),
    delta: narrowPending(est.delta, tokens.delta, r.delta.lo, r.delta.hi),
    up: narrowPending(est.up, tokens.up, r.up.lo, r.up.hi),
    down: narrowPending(est.down, tokens.down, r.down.lo, r.down.hi),
  };
}

/** The four intervals now. */
export function liveIntervals(est: LiveEstimate): LiveEstimate<IntervalEstimate> {
  return { newMean: interval(est.newMean), delta: interval(est.delta), up: interval(est.up), down: interval(est.down) };
}
