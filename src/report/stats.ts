/**
 * The statistics of the run report: Cohen's κ on pass/fail verdicts, and percentile bootstrap
 * confidence intervals drawn with a seeded PRNG (equal inputs give equal intervals on every run).
 * Pure functions on numbers; nothing here reads rows.
 */
import { Mulberry32 } from '../reference-server/prng.js';

/** The seed of every bootstrap of the report: its intervals are reproducible. */
export const BOOTSTRAP_SEED = 20_261_201;
/** Resamples per interval. */
export const BOOTSTRAP_RESAMPLES = 1000;
/**
 * Draws per resample at most. Beyond it the m-out-of-n bootstrap, rescaled: each resample draws
 * m values, and its mean's deviation from the sample mean is scaled by √(m/n), which gives the
 * same variance as n draws (σ²/n) at a bounded cost (10^6 rows: 5·10^6 draws per interval, not
 * 10^9). The report is made at the end of every run, which waits for it: 5,000 draws keep a mean's
 * resampled distribution close to normal, and the four intervals of a two-agent run cost 2·10^7
 * draws at any size (172 ms in `reverify report` on 20,000 rows, against 386 ms with 20,000).
 */
export const BOOTSTRAP_DRAWS_MAX = 5_000;

/** A 2×2 table of paired pass/fail verdicts: `oldNew`, `p` pass, `f` fail. */
export interface PassTable {
  pp: number;
  pf: number;
  fp: number;
  ff: number;
}

/**
 * Cohen's κ of two raters on pass/fail: (po − pe) / (1 − pe). `null` when undefined: no pairs, or
 * both raters gave one and the same verdict to every pair (pe = 1).
 */
export function cohensKappa(t: PassTable): number | null {
  const n = t.pp + t.pf + t.fp + t.ff;
  if (n === 0) return null;
  const po = (t.pp + t.ff) / n;
  const oldPass = (t.pp + t.pf) / n;
  const newPass = (t.pp + t.fp) / n;
  const pe = oldPass * newPass + (1 - oldPass) * (1 - newPass);
  if (pe >= 1) return null;
  return (po - pe) / (1 - pe);
}

/** A 95 % interval. */
export interface Interval {
  low: number;
  high: number;
}

/** The value at quantile `q` of sorted numbers (linear interpolation between order statistics). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const pos = (sorted.length - 1) * q;
  const i = Math.floor(pos);
  const frac = pos - i;
  return i + 1 < sorted.length ? sorted[i] + frac * (sorted[i + 1] - sorted[i]) : sorted[i];
}

/**
 * Percentile bootstrap 95 % interval of the mean of `values` (for paired data, pass the per-row
 * differences): `resamples` means of n draws with replacement, their 2.5 and 97.5 percentiles
 * (above `maxDraws` values, m-out-of-n rescaled: see BOOTSTRAP_DRAWS_MAX). `null` for no values.
 */
export function bootstrapMeanInterval(values: ArrayLike<number>, opts: BootstrapOptions = {}): Interval | null {
  return bootstrapMeanIntervalOf(values.length, (i) => values[i], opts);
}

export interface BootstrapOptions {
  seed?: number;
  resamples?: number;
  maxDraws?: number;
}

/** `bootstrapMeanInterval` of the `n` values `valueAt(0…n−1)`, none held in an array of their own (the same numbers). */
export function bootstrapMeanIntervalOf(n: number, valueAt: (i: number) => number, opts: BootstrapOptions = {}): Interval | null {
  if (n === 0) return null;
  const random = new Mulberry32(opts.seed ?? BOOTSTRAP_SEED);
  const b = opts.resamples ?? BOOTSTRAP_RESAMPLES;
  const m = Math.min(n, opts.maxDraws ?? BOOTSTRAP_DRAWS_MAX);
  let center = 0;
  if (m < n) {
    for (let i = 0; i < n; i++) center += valueAt(i);
    center /= n;
  }
  const scale = Math.sqrt(m / n);
  const means = new Float64Array(b);
  for (let i = 0; i < b; i++) {
    let sum = 0;
    for (let j = 0; j < m; j++) sum += valueAt(Math.floor(random.next() * n));
    means[i] = m < n ? center + (sum / m - center) * scale : sum / n;
  }
  means.sort();
  return { low: quantile(means, 0.025), high: quantile(means, 0.975) };
}

export function mean(values: ArrayLike<number>): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i];
  return sum / values.length;
}

/** Counts of `values` in `bins` equal bins over [lo, hi] (the last bin holds `hi`). */
export function histogram(values: ArrayLike<number>, lo: number, hi: number, bins: number): number[] {
  const counts = new Array<number>(bins).fill(0);
  const width = (hi - lo) / bins;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) continue;
    const k = width > 0 ? Math.min(bins - 1, Math.max(0, Math.floor((v - lo) / width))) : 0;
    counts[k]++;
  }
  return counts;
}
