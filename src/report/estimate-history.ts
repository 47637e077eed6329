/**
 * The live estimate's history for the report: how the confidence sequence of the paired delta
 * (src/stats/run-estimate.ts, docs/statistics.md) narrowed as tasks came in, replayed from the
 * files. The paired rows of the verdict join are summed per agent and task (a unit), the units are
 * put in the run's plan order (`--order random`: the tasks by their seeded rank, as the planner
 * orders them; file order: by where each task's first row is), and fed to the same estimate the
 * workflow keeps, in `STEPS` equal batches, its view taken after each. So each point is what the
 * live view showed at that commit, had every row its final verdict when its batch committed (the
 * live view held rows then in flight or failed at their worst case: wider, never narrower). Rows
 * without both verdicts are not in the replay.
 */
import type { PairedUnit } from '../contract/batch-result.js';
import type { PlanOrder } from '../contract/plan-summary.js';
import type { ShownInterval } from '../contract/estimate-view.js';
import { createRunEstimate, feedBatch, runEstimateView, type PlannedUnits, type RunEstimate } from '../stats/run-estimate.js';
import { argsortByKey } from './argsort.js';
import { PASS_THRESHOLD, type AgentJoin, type VerdictJoin } from './verdict-join.js';

/** Points of the history at most (batches the units are fed in). */
export const STEPS = 100;

/** The estimate after one step: rows and tasks fed, and the delta per agent and over all agents (null: off). */
export interface EstimatePoint {
  rows: number;
  /** Units fed (over all agents). */
  units: number;
  all: ShownInterval | null;
  perAgent: Record<string, ShownInterval | null>;
}

export interface EstimateHistory {
  confidence: number;
  order: PlanOrder;
  /** Units (agent × task: over all agents, a task of two agents is two units) and rows replayed. */
  units: number;
  rows: number;
  points: EstimatePoint[];
}

/** What the replay reads of a verdict join. */
export type JoinOrder = Pick<VerdictJoin, 'taskOrder' | 'order'> & {
  agents: readonly Pick<AgentJoin, 'agent' | 'oldRewards' | 'newRewards' | 'taskIds'>[];
};

const newUnit = (agent: string, task: number): PairedUnit => ({
  agent,
  task: String(task),
  rows: 0,
  known: 0,
  oldSum: 0,
  newSum: 0,
  up: 0,
  down: 0,
  invalid: 0,
});

/** Adds one paired row to its unit (a reward outside [0, 1] makes it invalid, which turns the estimate off). */
function addRow(u: PairedUnit, before: number, after: number): void {
  u.rows++;
  if (!(before >= 0 && before <= 1 && after >= 0 && after <= 1)) {
    u.invalid++;
    return;
  }
  u.known++;
  u.oldSum += before;
  u.newSum += after;
  if (before < PASS_THRESHOLD && after >= PASS_THRESHOLD) u.up++;
  if (before >= PASS_THRESHOLD && after < PASS_THRESHOLD) u.down++;
}

/** The first row of sorted `taskIds` whose task is ≥ `task` (its length when none). */
function lowerBound(taskIds: ArrayLike<number>, task: number, from = 0): number {
  let [lo, hi] = [from, taskIds.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (taskIds[mid] < task) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The units in plan order, made one at a time (none kept): tasks by place (ties by ordinal), and a
 * task's agents together in the join's agent order, each agent's paired rows of the task summed.
 * `order`: the task ordinals in plan order (`argsortByKey` of the join's places). An agent's rows are
 * in task order, so a task's rows are found by binary search: memory holds the plan order (4 bytes
 * a task), not a unit or an index a task.
 */
function forEachUnit(join: JoinOrder, order: Uint32Array, visit: (u: PairedUnit) => void): void {
  for (const task of order)
    for (const a of join.agents) {
      const from = lowerBound(a.taskIds, task);
      const to = lowerBound(a.taskIds, task + 1, from);
      if (from === to) continue;
      const u = newUnit(a.agent, task);
      for (let i = from; i < to; i++) addRow(u, a.oldRewards[i], a.newRewards[i]);
      visit(u);
    }
}

/** Each agent's planned units (in the order agents first appear in plan order), and the units and rows over all. */
function plannedOfJoin(join: JoinOrder, order: Uint32Array): { perAgent: Record<string, PlannedUnits>; units: number; rows: number } {
  const perAgent = new Map<string, PlannedUnits>();
  let units = 0;
  let rows = 0;
  forEachUnit(join, order, (u) => {
    let p = perAgent.get(u.agent);
    if (!p) perAgent.set(u.agent, (p = { units: 0, rows: 0, maxRows: 0, oldSum: 0, invalid: 0 }));
    // The sums of plannedOf (run-estimate.ts), unit by unit in the same order: the same numbers.
    p.units++;
    p.rows += u.rows;
    p.maxRows = Math.max(p.maxRows, u.rows);
    p.oldSum += u.oldSum;
    p.invalid += u.invalid;
    units++;
    rows += u.rows;
  });
  return { perAgent: Object.fromEntries(perAgent), units, rows };
}

const deltaOf = (v: { delta?: ShownInterval }) => (v.delta ? { ...v.delta } : null);

/**
 * Units fed to the estimate at once, at most: a step's units go in as several batches of the estimate
 * (the same numbers: each unit enters, and the one before it closes, in the same order), so that
 * each dies young instead of waiting for its step (10^7 rows: 25,000 units a step). Measured at 10^7
 * in one process: the replay grew the RSS by 79 MiB fed a step at once with per-task starts, 35 in
 * chunks with the binary search (the rest is V8's young generation: estimate-history-offthread.ts).
 */
const FEED_UNITS = 1024;

/**
 * The history of the live delta, replayed over the join's paired rows in the plan order at
 * `confidence`, in `steps` points; `feedUnits`: the units fed at once at most (tests vary it).
 */
export function estimateHistoryOf(join: JoinOrder, confidence: number, steps = STEPS, feedUnits = FEED_UNITS): EstimateHistory | null {
  // Sorted once for both passes over the units (a heapsort of every task: 1.3–2.4 s at 10^7 rows).
  const order = argsortByKey(join.taskOrder);
  const planned = plannedOfJoin(join, order);
  if (planned.units === 0) return null;
  const est = createRunEstimate(planned.perAgent, planned.rows, confidence);
  const size = Math.ceil(planned.units / Math.min(steps, planned.units));
  const points: EstimatePoint[] = [];
  let chunk: PairedUnit[] = [];
  let [fed, batch] = [0, 0];
  forEachUnit(join, order, (u) => {
    chunk.push(u);
    fed++;
    const stepEnds = fed % size === 0 || fed === planned.units;
    if (!stepEnds && chunk.length < feedUnits) return;
    feedBatch(est, batch++, chunk);
    chunk = [];
    if (stepEnds) points.push(pointOf(est));
  });
  return { confidence, order: join.order, units: planned.units, rows: planned.rows, points };
}

/** The estimate's view after a step. */
function pointOf(est: RunEstimate): EstimatePoint {
  const view = runEstimateView(est);
  return {
    rows: est.rowsFed,
    units: view.all.tasks.seen,
    all: deltaOf(view.all),
    perAgent: Object.fromEntries(Object.entries(view.perAgent).map(([a, v]) => [a, deltaOf(v)])),
  };
}
