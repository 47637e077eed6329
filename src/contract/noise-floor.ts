/**
 * The judge noise floor's figures (`--noise-sample`; computed by src/stats/noise-floor.ts). Types
 * only: the workflow bundle imports this file, so it must not contain runtime code.
 */

/** The judge's agreement with itself over the rows re-judged. */
export interface NoiseFloor {
  /** Rows re-judged (the sample). */
  sampled: number;
  /** Of those, rows graded both times: the statistics are over these. */
  n: number;
  /** Pass/fail counts: both pass, pass then fail, fail then pass, both fail. */
  bothPass: number;
  passFail: number;
  failPass: number;
  bothFail: number;
  /** (passFail + failPass) / n; null when n = 0. */
  flipRate: number | null;
  /** Cohen's κ on pass/fail; null when n = 0 or undefined (p_e = 1). */
  kappa: number | null;
  /** Mean |second − first| over the n rows; null when n = 0. */
  meanAbsDelta: number | null;
}
