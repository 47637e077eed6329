/**
 * The numbers `reverify report --fail-if` is checked on: the report's post-hoc paired statistics
 * (paired-stats.ts: per agent and over all agents, intervals clustered by task, Miller 2024). The
 * delta is the paired difference new − old of the reward; the new and old means and the flip rates
 * (share of paired rows gone fail → pass, or pass → fail, at the pass threshold) are clustered means
 * of their per-row values, computed the same way (pairedStatsOf's `value`). Each is computed when a
 * rule asks for it.
 */
import type { ClusteredMean, RowValue } from '../stats/clustered.js';
import type { GateEvidence, GateLookup } from '../stats/gate-check.js';
import { ALL_AGENTS, type GateStatistic } from '../stats/gate-rules.js';
import { difference, pairedStatsOf, type PairedReport } from './paired-stats.js';
import { PASS_THRESHOLD, type VerdictJoin } from './verdict-join.js';

/** Each statistic's per-row value of a paired row (old, new reward). */
const PER_ROW: Record<GateStatistic, RowValue> = {
  delta: difference,
  new: (_o, n) => n,
  old: (o) => o,
  'flips-up': (o, n) => (o < PASS_THRESHOLD && n >= PASS_THRESHOLD ? 1 : 0),
  'flips-down': (o, n) => (o >= PASS_THRESHOLD && n < PASS_THRESHOLD ? 1 : 0),
};

function evidenceOf(m: ClusteredMean | null, confidence: number): GateEvidence {
  if (m === null) return { value: null, why: 'fewer than 2 rows with both an old and a new reward' };
  const level = `${Math.round(confidence * 1000) / 10}%`;
  return {
    value: { estimate: m.mean, lo: m.lo, hi: m.hi },
    basis: `${level} task-clustered interval, ${m.rows} paired rows in ${m.clusters} tasks`,
  };
}

/** The lookup of a verdict join's statistics at `confidence` (each statistic computed once, when asked). */
export function reportGateLookup(join: Pick<VerdictJoin, 'agents'>, confidence: number): GateLookup {
  const cache = new Map<GateStatistic, PairedReport>();
  const reportOf = (s: GateStatistic) => {
    let r = cache.get(s);
    if (!r) cache.set(s, (r = pairedStatsOf(join, confidence, PER_ROW[s])));
    return r;
  };
  return (scope, statistic) => {
    const r = reportOf(statistic);
    const stats = scope === ALL_AGENTS ? r.all : r.agents.find((a) => a.agent === scope);
    if (!stats) return { value: null, why: `the output has no agent '${scope}'` };
    return evidenceOf(stats.delta, confidence);
  };
}
