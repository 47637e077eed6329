/**
 * The run's live paired estimate (docs/statistics.md): per agent and over all agents, the four
 * confidence sequences of live-estimate.ts, fed by the workflow at commit from the batches' paired
 * values per task (`PairedUnit`). Pure and deterministic (workflow state: plain JSON, O(agents)).
 *
 * Units: a run of consecutive plan rows of one agent and task (with tasks kept together in the plan,
 * a task). Their number per agent is counted from the plan before the first batch (`planned`).
 * Order: units enter in plan order, batch after batch; a batch committed before the ones planned
 * ahead of it waits in `waiting` until they are in (so what is known when a unit enters depends
 * only on the units before it, whatever order batches finish in). The last unit of a batch may go
 * on in the next one: it enters as pending over its whole range, and is narrowed (or resolved) when
 * the next batch shows where it ends. A unit with rows not known (judge failures, rows set aside or
 * dropped) stays pending at the range those rows allow: never dropped; a re-judgment round that
 * scores its rows narrows or resolves it (rejudged-units.ts). The view is clamped to each
 * quantity's natural range (row weighting widens the sequences' ranges past it).
 */
import type { PairedUnit } from '../contract/batch-result.js';
import type { EstimateView, RunEstimateView, ShownInterval } from '../contract/estimate-view.js';
import { liveIntervals, type LiveEstimate } from './live-estimate.js';
import { INVALID, keepUnsettled, settleEarly, type UnsettledUnit } from './rejudged-units.js';
import { addWhole, createRowWeighted, scaleOf, settleUnit } from './row-weighted-units.js';
import type { IntervalEstimate, PendingToken } from './wor-cs.js';

/** One agent's (or all agents') sequences and what was planned. */
export interface AgentEstimate {
  est: LiveEstimate;
  /** Units planned (N), their rows (R), the most in one unit, and the sum of their old rewards. */
  planned: number;
  rows: number;
  maxRows: number;
  oldSum: number;
  /** Why there is no estimate (a reward missing or outside [0, 1], a count that does not match); null: on. */
  off: string | null;
}

/** What the count of the plan found per agent (activities/count-paired-units.ts). */
export interface PlannedUnits {
  units: number;
  rows: number;
  maxRows: number;
  /** The old rewards' sum (the old mean is exact: every old reward is in --rollouts). */
  oldSum: number;
  /** Rows whose old reward is missing or outside [0, 1]. */
  invalid: number;
}

interface OpenUnit {
  unit: PairedUnit;
  agent: LiveEstimate<PendingToken> | null;
  all: LiveEstimate<PendingToken> | null;
}

export interface RunEstimate {
  confidence: number;
  /** The plan is in file order: the intervals are not guaranteed (absent: random order). */
  fileOrder?: boolean;
  agents: Record<string, AgentEstimate>;
  all: AgentEstimate;
  /** Rows planned, and rows fed so far (at the last, the open unit is closed). */
  rows: number;
  rowsFed: number;
  /** The next batch whose units enter; later batches committed before it wait here. */
  nextBatch: number;
  waiting: Record<number, PairedUnit[]>;
  /** The last unit fed: it may go on in the next batch. */
  open: OpenUnit | null;
  /** Units with rows unknown at the end of the first pass, by agent and task, for re-judgment (absent: none yet). */
  unsettled?: Record<string, UnsettledUnit | null>;
  /** Re-judged rows committed before the first pass had entered, summed by agent and task, settled once it has (rejudged-units.ts). */
  early?: Record<string, PairedUnit>;
}

function agentEstimate(p: PlannedUnits, confidence: number): AgentEstimate {
  const alpha = 1 - confidence;
  if (p.units < 1) return { est: createRowWeighted(1, 1, 1, alpha), planned: 0, rows: 0, maxRows: 1, oldSum: 0, off: 'no tasks planned' };
  const est = createRowWeighted(p.units, p.rows, p.maxRows, alpha);
  return { est, planned: p.units, rows: p.rows, maxRows: p.maxRows, oldSum: p.oldSum, off: p.invalid > 0 ? INVALID : null };
}

/** What the count of the plan finds for these units (of one agent): for tests and checks. */
export function plannedOf(units: readonly PairedUnit[]): PlannedUnits {
  return {
    units: units.length,
    rows: units.reduce((n, u) => n + u.rows, 0),
    maxRows: units.reduce((m, u) => Math.max(m, u.rows), 0),
    oldSum: units.reduce((n, u) => n + u.oldSum, 0),
    invalid: units.reduce((n, u) => n + u.invalid, 0),
  };
}

/** A new estimate for the units counted per agent, `rows` plan rows, at level `confidence` (`fileOrder`: the plan is not permuted). */
export function createRunEstimate(
  perAgent: Record<string, PlannedUnits>,
  rows: number,
  confidence: number,
  fileOrder = false,
): RunEstimate {
  const counts = Object.values(perAgent);
  const sum = (f: (p: PlannedUnits) => number) => counts.reduce((n, p) => n + f(p), 0);
  const all: PlannedUnits = {
    units: sum((p) => p.units),
    rows: sum((p) => p.rows),
    maxRows: Math.max(1, ...counts.map((p) => p.maxRows)),
    oldSum: sum((p) => p.oldSum),
    invalid: sum((p) => p.invalid),
  };
  return {
    confidence,
    ...(fileOrder ? { fileOrder: true } : {}),
    agents: Object.fromEntries(Object.entries(perAgent).map(([a, p]) => [a, agentEstimate(p, confidence)])),
    all: agentEstimate(all, confidence),
    rows,
    rowsFed: 0,
    nextBatch: 0,
    waiting: {},
    open: null,
  };
}

/** A committed batch's units: entered now if every batch before it is in, else kept until they are. */
export function feedBatch(e: RunEstimate, batch: number, units: PairedUnit[]): void {
  if (batch < e.nextBatch) return;
  e.waiting[batch] = units;
  while (e.waiting[e.nextBatch] !== undefined) {
    const next = e.waiting[e.nextBatch];
    delete e.waiting[e.nextBatch];
    e.nextBatch++;
    next.forEach((u, k) => enterUnit(e, u, k === next.length - 1));
  }
  if (e.rowsFed >= e.rows) {
    closeOpen(e);
    settleEarly(e);
  }
}

/** Enters one unit: merged into the open one if it goes on with it; the last of a batch stays open. */
function enterUnit(e: RunEstimate, u: PairedUnit, lastOfBatch: boolean): void {
  e.rowsFed += u.rows;
  const open = e.open;
  if (open && open.unit.agent === u.agent && open.unit.task === u.task) {
    for (const k of ['rows', 'known', 'oldSum', 'newSum', 'up', 'down', 'invalid'] as const) open.unit[k] += u[k];
  } else {
    closeOpen(e);
    const agent = e.agents[u.agent];
    e.open = { unit: copyUnit(u), agent: agent ? enterWhole(agent) : null, all: enterWhole(e.all) };
  }
  if (!lastOfBatch) closeOpen(e);
}

/** A copy of `u`, fields listed: the spread helper of the workflow bundle reads globals per call (wor-cs.ts). */
function copyUnit(u: PairedUnit): PairedUnit {
  const { agent, task, rows, known, oldSum, newSum, up, down, invalid } = u;
  return { agent, task, rows, known, oldSum, newSum, up, down, invalid };
}

/** Enters a unit as pending over its whole range (null: the estimate is off). */
function enterWhole(a: AgentEstimate): LiveEstimate<PendingToken> | null {
  if (a.off) return null;
  if (a.est.newMean.added >= a.planned) {
    a.off = `more tasks than the ${a.planned} planned`;
    return null;
  }
  return addWhole(a.est);
}

/** The open unit's end is known: narrowed to what its rows allow (resolved when all are known). */
function closeOpen(e: RunEstimate): void {
  const open = e.open;
  if (!open) return;
  e.open = null;
  const u = open.unit;
  const left = (a: AgentEstimate | undefined, tokens: LiveEstimate<PendingToken> | null) => {
    if (!a || !tokens || a.off) return null;
    if (u.invalid > 0) {
      a.off = INVALID;
      return null;
    }
    return settleUnit(a.est, tokens, u, scaleOf(a.est, a.maxRows));
  };
  const agent = left(e.agents[u.agent], open.agent);
  const all = left(e.all, open.all);
  if (agent || all) keepUnsettled(e, { unit: u, agent, all });
}

/**
 * An interval as shown, clamped to the quantity's natural range ([0, 1] for means and flip rates,
 * [−1, 1] for the delta): row weighting widens a sequence's range past it (a unit's value is its
 * sum times N/R), so its sure bounds may lie outside; the true value lies within, so the clamped
 * interval is still valid.
 */
function shown(iv: IntervalEstimate, min = 0, max = 1): ShownInterval {
  const clamp = (x: number) => Math.min(max, Math.max(min, x));
  return { estimate: clamp(iv.estimate), lo: clamp(iv.lo), hi: clamp(iv.hi) };
}

function viewOf(a: AgentEstimate): EstimateView {
  const tasks = { seen: a.est.newMean.added, pending: a.est.newMean.pending, planned: a.planned };
  if (a.off) return { off: a.off, tasks };
  const iv = liveIntervals(a.est);
  const old = a.oldSum / a.rows;
  return {
    tasks,
    oldMean: { estimate: old, lo: old, hi: old },
    newMean: shown(iv.newMean),
    delta: shown(iv.delta, -1, 1),
    flipsUp: shown(iv.up),
    flipsDown: shown(iv.down),
  };
}

/** The estimate as the progress query answers it. */
export function runEstimateView(e: RunEstimate): RunEstimateView {
  return {
    confidence: e.confidence,
    ...(e.fileOrder ? { fileOrder: true } : {}),
    perAgent: Object.fromEntries(Object.entries(e.agents).map(([agent, a]) => [agent, viewOf(a)])),
    all: viewOf(e.all),
  };
}
