/**
 * Re-judgment settles the live estimate's pending units (docs/statistics.md "Judge failures"): a
 * unit of the first pass that ended with rows without a new reward (judge failures) stays pending
 * at the range those rows allow; when a later re-judgment round scores some of them, its batches
 * report them as paired values per task (`PairedUnit`, sums only), and the unit is narrowed, or
 * resolved once every row is known. Pure and deterministic (workflow state: plain JSON).
 *
 * Which unit a re-judged row belongs to: the one of its agent and task. A task cut into several
 * units (a plan that interleaves tasks) with more than one left pending is ambiguous: those stay
 * at their worst case. At most `MAX_UNSETTLED` units are kept (in plan order), so the state stays
 * small (1.4 kB a unit as JSON, 180 kB at most); later ones stay at their worst case, as before re-judgment.
 * Validity: a re-judged value settles its unit only once every unit of the first pass has entered
 * (re-judgment is streamed into the first pass: values committed before then wait, summed by agent
 * and task, in `early`), so what it changes (the plug-ins) sets no bet any more; the value replaces
 * a worst case that contained it, so the interval holds as before (wor-cs.ts).
 */
import type { PairedUnit } from '../contract/batch-result.js';
import type { LiveEstimate } from './live-estimate.js';
import { scaleOf, settleUnit } from './row-weighted-units.js';
import type { AgentEstimate, RunEstimate } from './run-estimate.js';
import type { PendingToken } from './wor-cs.js';

/** Units with rows left unknown kept for re-judgment, at most. */
export const MAX_UNSETTLED = 128;
/** Agent-task pairs whose re-judged rows wait for the first pass to have entered, at most (later ones stay at their worst case). */
export const MAX_EARLY = 4 * MAX_UNSETTLED;

export const INVALID = 'a reward is missing or outside [0, 1]';

/** A pending unit kept for re-judgment: what is known of it, and its tokens (null: that estimate is off). */
export interface UnsettledUnit {
  unit: PairedUnit;
  agent: LiveEstimate<PendingToken> | null;
  all: LiveEstimate<PendingToken> | null;
}

const keyOf = (u: Pick<PairedUnit, 'agent' | 'task'>) => JSON.stringify([u.agent, u.task]);

/** A unit of the first pass ended with rows unknown: kept (null marks a task with several such units). */
export function keepUnsettled(e: RunEstimate, kept: UnsettledUnit): void {
  const map = (e.unsettled ??= {});
  const key = keyOf(kept.unit);
  if (key in map) map[key] = null;
  else if (Object.keys(map).length < MAX_UNSETTLED) map[key] = kept;
}

/**
 * A committed re-judgment batch's units: each narrows (or resolves) the pending unit of its agent
 * and task, once the first pass has entered (`firstPassOver`: it will not, a `--stop-when` ended
 * it); before that, they wait in `early`.
 */
export function settleRejudged(e: RunEstimate, units: readonly PairedUnit[], firstPassOver = false): void {
  if (e.rowsFed < e.rows && !firstPassOver) {
    keepEarly(e, units);
    return;
  }
  if (e.early) settleEarly(e);
  settleNow(e, units);
}

/** Re-judged rows that came before the first pass had entered: summed by agent and task, up to `MAX_EARLY` pairs. */
function keepEarly(e: RunEstimate, units: readonly PairedUnit[]): void {
  const early = (e.early ??= {});
  let pairs = Object.keys(early).length;
  for (const u of units) {
    const key = keyOf(u);
    const was = early[key];
    if (was) {
      for (const k of ['rows', 'known', 'oldSum', 'newSum', 'up', 'down', 'invalid'] as const) was[k] += u[k];
    } else if (pairs < MAX_EARLY) {
      early[key] = {
        agent: u.agent,
        task: u.task,
        rows: u.rows,
        known: u.known,
        oldSum: u.oldSum,
        newSum: u.newSum,
        up: u.up,
        down: u.down,
        invalid: u.invalid,
      };
      pairs++;
    }
  }
}

/** The first pass has entered: the re-judged rows that waited settle their units. */
export function settleEarly(e: RunEstimate): void {
  const early = e.early;
  if (!early) return;
  delete e.early;
  settleNow(e, Object.values(early));
}

function settleNow(e: RunEstimate, units: readonly PairedUnit[]): void {
  const map = e.unsettled ?? {};
  for (const u of units) {
    const key = keyOf(u);
    const kept = map[key];
    if (!kept) continue;
    const k = kept.unit;
    if (u.invalid > 0 || k.known + u.known > k.rows) {
      for (const a of [e.agents[u.agent], e.all])
        if (a && !a.off) a.off = u.invalid > 0 ? INVALID : 'more re-judged rows than were unknown';
      delete map[key];
      continue;
    }
    k.known += u.known;
    k.newSum += u.newSum;
    k.up += u.up;
    k.down += u.down;
    kept.agent = settleOne(e.agents[u.agent], kept.agent, k);
    kept.all = settleOne(e.all, kept.all, k);
    if (k.known === k.rows) delete map[key];
  }
}

function settleOne(
  a: AgentEstimate | undefined,
  tokens: LiveEstimate<PendingToken> | null,
  u: PairedUnit,
): LiveEstimate<PendingToken> | null {
  if (!a || !tokens || a.off) return null;
  return settleUnit(a.est, tokens, u, scaleOf(a.est, a.maxRows));
}
