/**
 * The live paired estimate as text (docs/statistics.md): compact for the progress line and the
 * Temporal UI's details, a line per agent for `reverify status`. Pure: the workflow imports it.
 */
import type { EstimateView, RunEstimateView, ShownInterval } from './estimate-view.js';

/** `+0.031` (signed: a delta), `0.540` (a mean or rate). */
function num(x: number, signed: boolean): string {
  const s = x.toFixed(3);
  return signed && x >= 0 ? `+${s}` : s.replace(/^-/, '−');
}

/** `+0.031 [−0.004, +0.066]`; a collapsed interval (the exact value) without brackets. */
export function intervalText(iv: ShownInterval, signed = false): string {
  if (iv.lo === iv.hi) return `${num(iv.estimate, signed)} (exact)`;
  return `${num(iv.estimate, signed)} [${num(iv.lo, signed)}, ${num(iv.hi, signed)}]`;
}

/**
 * `Δ +0.031 [−0.004, +0.066]` over all agents, for the progress line; '' without an estimate. In
 * file order the interval is not guaranteed, so it is not shown: `Δ so far +0.031 (file order)`.
 */
export function deltaText(e: RunEstimateView | null | undefined): string {
  const d = e?.all.delta;
  if (!d) return '';
  return e.fileOrder ? `Δ so far ${num(d.estimate, true)} (file order)` : `Δ ${intervalText(d, true)}`;
}

/** What the views add to an estimate in file order. */
export const FILE_ORDER_NOTE = 'file order: the intervals assume tasks in a random order and are not guaranteed here (--order random)';

/** `120/400 tasks (3 pending)`. */
function tasksText(v: EstimateView): string {
  const t = v.tasks;
  return `${t.seen}/${t.planned} tasks${t.pending > 0 ? ` (${t.pending} pending)` : ''}`;
}

/** One agent's (or all agents') estimate in a line. */
export function estimateText(v: EstimateView): string {
  if (v.off || !v.delta || !v.newMean || !v.oldMean || !v.flipsUp || !v.flipsDown) return `no estimate: ${v.off ?? 'none'}`;
  return (
    `delta ${intervalText(v.delta, true)}, new ${intervalText(v.newMean)}, old ${num(v.oldMean.estimate, false)}, ` +
    `flips 0→1 ${intervalText(v.flipsUp)}, 1→0 ${intervalText(v.flipsDown)}; ${tasksText(v)}`
  );
}

/** `reverify status`: a heading and a line for all agents, then one per agent. */
export function estimateLines(e: RunEstimateView): string[] {
  const agents = Object.keys(e.perAgent).sort();
  return [
    `Estimate (${Math.round(e.confidence * 1000) / 10}% confidence sequences, new − old per task; docs/statistics.md):`,
    ...(e.fileOrder ? [`  ${FILE_ORDER_NOTE}`] : []),
    `  all: ${estimateText(e.all)}`,
    ...agents.map((a) => `  ${a}: ${estimateText(e.perAgent[a])}`),
  ];
}
