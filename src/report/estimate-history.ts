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
import { createRunEstimate, feedBatch, plannedOf, runEstimateView } from '../stats/run-estimate.js';
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

/**
 * Each agent's paired rows summed per task (a task's rows are consecutive in the join), in plan
 * order: tasks by place (ties by ordinal), and a task's agents together in the join's agent order.
 */
function unitsOf(join: JoinOrder): PairedUnit[] {
  const tasks = join.taskOrder.length;
  const perAgent = join.agents.map((a) => {
    const byTask = new Map<number, PairedUnit>();
    let u: PairedUnit | null = null;
    for (let i = 0; i < a.oldRewards.length; i++) {
      const task = a.taskIds[i];
      if (u === null || task !== a.taskIds[i - 1]) byTask.set(task, (u = newUnit(a.agent, task)));
      addRow(u, a.oldRewards[i], a.newRewards[i]);
    }
    return byTask;
  });
  const order = new Uint32Array(tasks).map((_, k) => k).sort((x, y) => join.taskOrder[x] - join.taskOrder[y] || x - y);
  const units: PairedUnit[] = [];
  for (const task of order)
    for (const byTask of perAgent) {
      const u = byTask.get(task);
      if (u) units.push(u);
    }
  return units;
}

const deltaOf = (v: { delta?: ShownInterval }) => (v.delta ? { ...v.delta } : null);

/** The history of the live delta, replayed over the join's paired rows in the plan order at `confidence`. */
export function estimateHistoryOf(join: JoinOrder, confidence: number, steps = STEPS): EstimateHistory | null {
  const units = unitsOf(join);
  if (units.length === 0) return null;
  const byAgent = new Map<string, PairedUnit[]>();
  for (const u of units) {
    const list = byAgent.get(u.agent);
    if (list) list.push(u);
    else byAgent.set(u.agent, [u]);
  }
  const rows = units.reduce((n, u) => n + u.rows, 0);
  const est = createRunEstimate(Object.fromEntries([...byAgent].map(([a, us]) => [a, plannedOf(us)])), rows, confidence);
  const size = Math.ceil(units.length / Math.min(steps, units.length));
  const points: EstimatePoint[] = [];
  for (let b = 0; b * size < units.length; b++) {
    feedBatch(est, b, units.slice(b * size, (b + 1) * size));
    const view = runEstimateView(est);
    points.push({
      rows: est.rowsFed,
      units: view.all.tasks.seen,
      all: deltaOf(view.all),
      perAgent: Object.fromEntries(Object.entries(view.perAgent).map(([a, v]) => [a, deltaOf(v)])),
    });
  }
  return { confidence, order: join.order, units: units.length, rows, points };
}
