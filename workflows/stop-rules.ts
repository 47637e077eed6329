/**
 * `--stop-when` in the workflow (the rules and their grammar: src/contract/stop-rules.ts). The
 * rules are evaluated at each commit of the first pass, from committed counts only (the rows of
 * the batches committed, the requests the ended batches reported, the live estimate fed in plan
 * order at commit), so a replay decides the same. When one fires: no new batch of the first pass
 * starts (round-window.ts reads `st.stoppedEarly`); the batches in flight, and held ones while the
 * request budget allows, finish and commit (held ones on a spent budget are dropped: `heldDropped`);
 * once the pass has ended, the rollouts of its plan never started are recorded with the
 * reason (the seed's `record_unstarted`, not an omission: `--resume` runs them); re-judgment
 * rounds of the rows already verified still run, as in any run.
 */
import { firstFiring, stopRuleText, stoppedEarlyText } from '../src/contract/stop-rules.js';
import type { RunSpec } from '../src/contract/run-spec.js';
import { runEstimateView } from '../src/stats/run-estimate.js';
import { recordUnstarted } from './coverage.js';
import type { RunState } from './run-state.js';

/** Rows of the first pass committed so far: answered, to either output, or not persisted. */
function firstPassRows(st: RunState): number {
  return st.totals.main + st.totals.failed + st.totals.dropped;
}

/**
 * After a commit of the first pass: notes the first rule that holds (once), unless every batch has
 * started already (then it would stop nothing).
 */
export function checkStopRules(spec: RunSpec, st: RunState): void {
  const rules = spec.stopWhen ?? [];
  if (rules.length === 0 || st.round !== 0 || st.stoppedEarly || st.plan === null) return;
  const first = st.segments?.[0];
  if (first && first.launched >= first.batches) return;
  const delta = st.estimate ? (runEstimateView(st.estimate).all.delta ?? null) : null;
  const rows = firstPassRows(st);
  const rule = firstFiring(rules, { delta, rows, requests: st.requestsUsed });
  if (rule === null) return;
  st.stoppedEarly = { rule: stopRuleText(rule), rows, planned: st.keysPlanned ?? st.plan.rows };
  st.messages.push(
    `Stopping early: --stop-when ${stopRuleText(rule)} holds at ${rows} of ${st.stoppedEarly.planned} rows; ` +
      'no new batch starts, the batches in flight finish and are committed',
  );
}

/**
 * Once a rule fired, batches held on a spent request budget (`budgetSpent`: nothing in flight, no
 * request left) are not launched again: the run ends instead of pausing for `reverify control
 * --max-requests`. Their rows (those answered so far were never committed) are recorded as
 * unstarted with the rest (`recordStoppedEarly`).
 */
export function heldDropped(st: RunState, budgetSpent: boolean): boolean {
  return st.round === 0 && !!st.stoppedEarly && budgetSpent;
}

/** The first pass ended after a rule fired: the rollouts it never started are recorded with the reason (once). */
export async function recordStoppedEarly(st: RunState): Promise<void> {
  if (!st.stoppedEarly || st.unstartedRecorded) return;
  st.unstartedRecorded = true;
  if (st.held.length > 0) {
    st.messages.push(
      `Stopped early with the request budget spent: ${st.held.length} held batch(es) not launched again; ` +
        'their rows are recorded as never started',
    );
    st.held = [];
    delete st.heldRows;
  }
  await recordUnstarted(st, stoppedEarlyText(st.stoppedEarly));
}
