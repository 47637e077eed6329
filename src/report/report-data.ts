/**
 * The numbers of the run report (`reverify report`): what the HTML plots and `--json` prints.
 * Built from the verdict join, the aggregate metrics file, the sidecar counts and the history timeline.
 */
import type { EstimateHistory } from './estimate-history.js';
import type { Timeline } from './history-timeline.js';
import { pairedStatsOf, type PairedReport } from './paired-stats.js';
import type { SidecarCounts } from './sidecar-classes.js';
import {
  bootstrapMeanIntervalOf,
  BOOTSTRAP_RESAMPLES,
  BOOTSTRAP_SEED,
  cohensKappa,
  histogram,
  mean,
  quantile,
  type Interval,
  type PassTable,
} from './stats.js';
import type { ReportNoise } from './noise-files.js';
import type { Numbers } from './number-column.js';
import { PASS_THRESHOLD, type AgentJoin, type FlipCounts, type FlippedRow, type TaskFlips, type VerdictJoin } from './verdict-join.js';

export interface Delta {
  old: number | null;
  new: number | null;
  delta: number | null;
  /** 95 % percentile bootstrap interval of the paired delta. */
  ci: Interval | null;
}

export interface KeyMetricDelta {
  name: string;
  /** From the run's aggregate metrics file (all rows of the main output). */
  new: number;
  /** Computed from the old rewards of the rows that have both verdicts; null: no old counterpart. */
  old: number | null;
  delta: number | null;
}

export interface AgentReport {
  agent: string;
  rows: number;
  /** Rows with an old and a new reward. */
  paired: number;
  noOld: number;
  flips: FlipCounts & { total: number };
  meanReward: Delta;
  passRate: Delta;
  passTable: PassTable;
  kappa: number | null;
  keyMetrics: KeyMetricDelta[];
}

export interface Distribution {
  labels: string[];
  old: number[];
  new: number[];
}

export interface ReportData {
  output: string;
  rollouts: string;
  /** A recovery run's input sidecar, read for the old rewards of the keys --rollouts lacks. */
  oldSidecar: string | null;
  sidecar: string;
  metrics: string | null;
  workflowId: string;
  /** The run's page in the Temporal UI (flipped rows link to its history), when known. */
  runUrl: string | null;
  /** Null when the history was read; else why the history part is unavailable. */
  historyUnavailable: string | null;
  passThreshold: number;
  bootstrap: { seed: number; resamples: number };
  totals: {
    oldRows: number;
    newRows: number;
    paired: number;
    noOld: number;
    oldOnly: number;
    /** The first of the old keys missing from the main output (`T:R`, key order); `oldOnly` counts them all. */
    missingKeys: string[];
    flips: FlipCounts & { total: number };
    passTable: PassTable;
    kappa: number | null;
  };
  agents: AgentReport[];
  tasks: TaskFlips[];
  /** Tasks with flips beyond those listed. */
  tasksMore: number;
  distribution: Distribution;
  flipped: FlippedRow[];
  flippedMore: number;
  sidecarCounts: SidecarCounts | null;
  timeline: Timeline | null;
  /** Paired differences clustered by task and the clustered McNemar test (paired-stats.ts). */
  paired: PairedReport;
  /** The live estimate replayed in the plan order (estimate-history.ts); null: no paired rows. */
  estimateHistory: EstimateHistory | null;
  /** `--noise-sample`: the judge's agreement with itself (src/report/noise-files.ts; null: no sample taken). */
  noise: ReportNoise;
}

const pass = (r: number) => r >= PASS_THRESHOLD;

export function passTableOf(olds: ArrayLike<number>, news: ArrayLike<number>): PassTable {
  const t = { pp: 0, pf: 0, fp: 0, ff: 0 };
  for (let i = 0; i < olds.length; i++) t[`${pass(olds[i]) ? 'p' : 'f'}${pass(news[i]) ? 'p' : 'f'}` as keyof PassTable]++;
  return t;
}

/** A row's score: its reward, or 1 for a pass and 0 for a fail. */
type Score = (reward: number) => number;
const rewardScore: Score = (r) => r;
const passScore: Score = (r) => (pass(r) ? 1 : 0);

function meanScore(rewards: Numbers, score: Score): number | null {
  if (rewards.length === 0) return null;
  let sum = 0;
  for (let i = 0; i < rewards.length; i++) sum += score(rewards[i]);
  return sum / rewards.length;
}

/** The paired delta of the rows' scores: old and new means, their difference, and the bootstrap interval of new − old (no per-row array made). */
function pairedDelta(olds: Numbers, news: Numbers, score: Score): Delta {
  const o = meanScore(olds, score);
  const n = meanScore(news, score);
  const ci = bootstrapMeanIntervalOf(olds.length, (i) => score(news[i]) - score(olds[i]));
  return { old: o, new: n, delta: o === null || n === null ? null : n - o, ci };
}

/** The old counterpart of an aggregate key metric, where the old rewards give one. */
function oldMetric(name: string, olds: Numbers): number | null {
  if (olds.length === 0) return null;
  if (name === 'mean/reward') return mean(olds);
  if (!['min/reward', 'max/reward', 'median/reward'].includes(name)) return null;
  // Sorted in their own kind (1 byte a value for 0/1 rewards), only for the metrics that need it.
  const sorted = olds.slice().sort();
  if (name === 'min/reward') return sorted[0];
  if (name === 'max/reward') return sorted[sorted.length - 1];
  return quantile(sorted, 0.5);
}

function agentReport(a: AgentJoin, keyMetrics: Record<string, unknown>): AgentReport {
  const passTable = passTableOf(a.oldRewards, a.newRewards);
  const flips = { ...a.flips, total: a.flips.up + a.flips.down + a.flips.changed };
  return {
    agent: a.agent,
    rows: a.rows,
    paired: a.oldRewards.length,
    noOld: a.noOld,
    flips,
    meanReward: pairedDelta(a.oldRewards, a.newRewards, rewardScore),
    passRate: pairedDelta(a.oldRewards, a.newRewards, passScore),
    passTable,
    kappa: cohensKappa(passTable),
    keyMetrics: Object.entries(keyMetrics)
      .filter((e): e is [string, number] => typeof e[1] === 'number')
      .map(([name, value]) => {
        const old = oldMetric(name, a.oldRewards);
        return { name, new: value, old, delta: old === null ? null : value - old };
      }),
  };
}

/** Old and new rewards in shared bins: one per value when every reward is 0 or 1, else 10 equal bins. */
function distributionOf(agents: AgentJoin[]): Distribution {
  const lists = agents.flatMap((a) => [a.oldRewards, a.newRewards]);
  let lo = Infinity;
  let hi = -Infinity;
  let binary = true;
  for (const list of lists)
    for (const v of list) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
      binary &&= v === 0 || v === 1;
    }
  const bins = binary ? 2 : 10;
  if (binary) [lo, hi] = [0, 1];
  const count = (pick: (a: AgentJoin) => Numbers) =>
    agents.map((a) => histogram(pick(a), lo, hi, bins)).reduce((s, h) => s.map((c, i) => c + h[i]), new Array<number>(bins).fill(0));
  const w = (hi - lo) / bins;
  const labels = binary
    ? ['0', '1']
    : Array.from({ length: bins }, (_, i) => `${(lo + i * w).toFixed(2)}–${(lo + (i + 1) * w).toFixed(2)}`);
  return { labels, old: count((a) => a.oldRewards), new: count((a) => a.newRewards) };
}

export interface ReportInputs {
  join: VerdictJoin;
  /** Agent name -> key_metrics of the aggregate metrics file. */
  keyMetrics: Record<string, Record<string, unknown>>;
  paths: { output: string; rollouts: string; oldSidecar: string | null; sidecar: string; metrics: string | null };
  workflowId: string;
  runUrl: string | null;
  historyUnavailable: string | null;
  sidecar: SidecarCounts | null;
  timeline: Timeline | null;
  /** The live estimate replayed over the join (estimate-history.ts: `estimateHistoryOf`, or off the command's thread). */
  estimateHistory: EstimateHistory | null;
  noise?: ReportNoise;
}

export function reportData(i: ReportInputs): ReportData {
  const agents = i.join.agents.map((a) => agentReport(a, i.keyMetrics[a.agent] ?? {}));
  const sum = (f: (a: AgentReport) => number) => agents.reduce((s, a) => s + f(a), 0);
  const passTable = {
    pp: sum((a) => a.passTable.pp),
    pf: sum((a) => a.passTable.pf),
    fp: sum((a) => a.passTable.fp),
    ff: sum((a) => a.passTable.ff),
  };
  const flips = {
    up: sum((a) => a.flips.up),
    down: sum((a) => a.flips.down),
    changed: sum((a) => a.flips.changed),
    total: sum((a) => a.flips.total),
  };
  return {
    ...i.paths,
    workflowId: i.workflowId,
    runUrl: i.runUrl,
    historyUnavailable: i.historyUnavailable,
    passThreshold: PASS_THRESHOLD,
    bootstrap: { seed: BOOTSTRAP_SEED, resamples: BOOTSTRAP_RESAMPLES },
    totals: {
      oldRows: i.join.oldRows,
      newRows: i.join.newRows,
      paired: sum((a) => a.paired),
      noOld: sum((a) => a.noOld),
      oldOnly: i.join.oldOnly,
      missingKeys: i.join.oldOnlyKeys,
      flips,
      passTable,
      kappa: cohensKappa(passTable),
    },
    agents,
    tasks: i.join.tasks,
    tasksMore: i.join.tasksMore,
    distribution: distributionOf(i.join.agents),
    flipped: i.join.flipped,
    flippedMore: i.join.flippedMore,
    sidecarCounts: i.sidecar,
    timeline: i.timeline,
    paired: pairedStatsOf(i.join),
    estimateHistory: i.estimateHistory,
    noise: i.noise ?? null,
  };
}
