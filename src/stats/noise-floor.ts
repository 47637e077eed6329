/**
 * The judge's noise floor (`--noise-sample N`, docs/statistics.md): rows already scored in a run are
 * judged a second time from the same saved answer, and the two verdicts are compared. A change
 * between two judges (or two runs) smaller than the judge's disagreement with itself is noise.
 *
 * Pure. Pass/fail is the project's pass rule (`reward >= PASS_THRESHOLD`, src/report/verdict-join.ts).
 * Cohen's κ on pass/fail: (p_o − p_e) / (1 − p_e) with p_o the share of rows whose two verdicts
 * agree and p_e the agreement expected by chance from each verdict's pass share. When p_e = 1 (every
 * verdict of both passes is the same class) κ is undefined: null.
 */
import type { NoiseFloor } from '../contract/noise-floor.js';
import { PASS_THRESHOLD } from '../report/verdict-join.js';

export type { NoiseFloor };

/** One row judged twice: its first reward (the output's) and its second (null: no grade the second time). */
export interface NoisePair {
  first: number;
  second: number | null;
}

const passes = (r: number) => r >= PASS_THRESHOLD;

/** The noise floor of `pairs` (rows whose second verdict has no numeric reward count as sampled only). */
export function noiseFloor(pairs: readonly NoisePair[]): NoiseFloor {
  let bothPass = 0;
  let passFail = 0;
  let failPass = 0;
  let bothFail = 0;
  let absSum = 0;
  for (const { first, second } of pairs) {
    if (second === null || !Number.isFinite(second) || !Number.isFinite(first)) continue;
    absSum += Math.abs(second - first);
    const a = passes(first);
    const b = passes(second);
    if (a && b) bothPass++;
    else if (a) passFail++;
    else if (b) failPass++;
    else bothFail++;
  }
  const n = bothPass + passFail + failPass + bothFail;
  const counts = { bothPass, passFail, failPass, bothFail };
  if (n === 0) return { sampled: pairs.length, n, ...counts, flipRate: null, kappa: null, meanAbsDelta: null };
  return {
    sampled: pairs.length,
    n,
    ...counts,
    flipRate: (passFail + failPass) / n,
    kappa: cohenKappa(bothPass, passFail, failPass, bothFail),
    meanAbsDelta: absSum / n,
  };
}

/** Cohen's κ of a 2×2 table (rows: first verdict pass/fail, columns: second); null when undefined. */
export function cohenKappa(bothPass: number, passFail: number, failPass: number, bothFail: number): number | null {
  const n = bothPass + passFail + failPass + bothFail;
  if (n === 0) return null;
  const po = (bothPass + bothFail) / n;
  const firstPass = (bothPass + passFail) / n;
  const secondPass = (bothPass + failPass) / n;
  const pe = firstPass * secondPass + (1 - firstPass) * (1 - secondPass);
  if (pe >= 1) return null;
  return (po - pe) / (1 - pe);
}

/** One line for the end summary and `reverify status`: `judge noise floor (N=50 of 50): flip rate 4.0%, κ 0.918, mean |Δreward| 0.040`. */
export function noiseFloorText(f: NoiseFloor, requested: number): string {
  if (f.n === 0) return `judge noise floor: none of the ${f.sampled} row(s) re-judged (of ${requested} asked) got a grade twice`;
  const kappa = f.kappa === null ? 'κ undefined (one class only)' : `κ ${f.kappa.toFixed(3)}`;
  const of = f.sampled === f.n && f.sampled === requested ? `N=${f.n}` : `N=${f.n} graded of ${f.sampled} re-judged, ${requested} asked`;
  return `judge noise floor (${of}): flip rate ${(100 * f.flipRate!).toFixed(1)}%, ${kappa}, mean |Δreward| ${f.meanAbsDelta!.toFixed(3)}`;
}
