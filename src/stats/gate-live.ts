/**
 * The numbers `reverify run --fail-if` is checked on: the run's live estimate at its end
 * (docs/statistics.md), per agent and over all agents, with its confidence sequence. At the end of
 * a full run every task is in and the interval is the exact value (or as wide as rows still
 * without a new reward allow); after an early stop it is the valid interval at that point.
 */
import type { EstimateView, RunEstimateView, ShownInterval } from '../contract/estimate-view.js';
import type { GateEvidence, GateLookup } from './gate-check.js';
import { ALL_AGENTS, type GateStatistic } from './gate-rules.js';

const FIELDS: Record<GateStatistic, keyof EstimateView> = {
  delta: 'delta',
  new: 'newMean',
  old: 'oldMean',
  'flips-up': 'flipsUp',
  'flips-down': 'flipsDown',
};

function basisOf(v: EstimateView, confidence: number): string {
  const t = v.tasks;
  const pending = t.pending > 0 ? `, ${t.pending} pending` : '';
  return `the run's live estimate at its end, ${Math.round(confidence * 1000) / 10}% confidence sequence, ${t.seen}/${t.planned} tasks${pending}`;
}

/** The lookup of a run's final estimate; `null` (a run without one) makes every rule unavailable. */
export function liveGateLookup(estimate: RunEstimateView | null | undefined, noneWhy: string): GateLookup {
  return (scope, statistic): GateEvidence => {
    if (!estimate) return { value: null, why: noneWhy };
    const view = scope === ALL_AGENTS ? estimate.all : estimate.perAgent[scope];
    if (!view) return { value: null, why: `the run's estimate has no agent '${scope}'` };
    if (view.off) return { value: null, why: `no estimate: ${view.off}` };
    const iv = view[FIELDS[statistic]] as ShownInterval | undefined;
    if (!iv) return { value: null, why: 'the run kept no estimate of it' };
    return { value: { estimate: iv.estimate, lo: iv.lo, hi: iv.hi }, basis: basisOf(view, estimate.confidence) };
  };
}

/** The agents of a run's estimate (none without one). */
export function liveGateAgents(estimate: RunEstimateView | null | undefined): string[] {
  return estimate ? Object.keys(estimate.perAgent) : [];
}
