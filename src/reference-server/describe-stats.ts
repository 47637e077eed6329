/**
 * The per-column statistics of NeMo Gym's default aggregation (spec §3.3), computed the way pandas
 * and numpy compute them so that the numbers agree to the last digit:
 * - sums use numpy's pairwise summation over the whole column, with 0 at missing positions
 *   (pandas fills NaN with 0 before `values.sum()`);
 * - mean = sum / count; std = sample std by the two-pass algorithm of pandas' `nanvar`;
 * - median = middle value, or (a + b) / 2 of the two middle values.
 */

/** The stats in output order. */
const STAT_NAMES = ['mean', 'max', 'min', 'median', 'std'] as const;

type StatName = (typeof STAT_NAMES)[number];

/** The stats of one column; NaN where pandas yields NaN (the key is then omitted). */
type ColumnStats = Record<StatName, number> & { count: number };

const PAIRWISE_BLOCK = 128;

/** numpy's `pairwise_sum` of `a[lo, lo + n)` (float64 add-reduce over a contiguous axis). */
export function pairwiseSum(a: Float64Array, lo: number, n: number): number {
  if (n < 8) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += a[lo + i];
    return sum;
  }
  if (n <= PAIRWISE_BLOCK) {
    let r0 = a[lo],
      r1 = a[lo + 1],
      r2 = a[lo + 2],
      r3 = a[lo + 3];
    let r4 = a[lo + 4],
      r5 = a[lo + 5],
      r6 = a[lo + 6],
      r7 = a[lo + 7];
    let i = 8;
    for (const end = n - (n % 8); i < end; i += 8) {
      const j = lo + i;
      r0 += a[j];
      r1 += a[j + 1];
      r2 += a[j + 2];
      r3 += a[j + 3];
      r4 += a[j + 4];
      r5 += a[j + 5];
      r6 += a[j + 6];
      r7 += a[j + 7];
    }
    let sum = r0 + r1 + (r2 + r3) + (r4 + r5 + (r6 + r7));
    for (; i < n; i++) sum += a[lo + i];
    return sum;
  }
  let half = Math.floor(n / 2);
  half -= half % 8;
  return pairwiseSum(a, lo, half) + pairwiseSum(a, lo + half, n - half);
}

/** Stats of one column given as a Float64Array with NaN at the rows lacking the field. */
function columnStats(values: Float64Array): ColumnStats {
  const n = values.length;
  const zeroFilled = new Float64Array(n);
  let count = 0;
  let max = -Infinity;
  let min = Infinity;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (Number.isNaN(v)) continue;
    zeroFilled[i] = v;
    count++;
    if (v > max) max = v;
    if (v < min) min = v;
  }
  if (count === 0) return { count, mean: NaN, max: NaN, min: NaN, median: NaN, std: NaN };

  const mean = pairwiseSum(zeroFilled, 0, n) / count;
  const present = new Float64Array(count);
  for (let i = 0, k = 0; i < n; i++) if (!Number.isNaN(values[i])) present[k++] = values[i];
  present.sort();
  const mid = count >> 1;
  const median = count % 2 === 1 ? present[mid] : (present[mid - 1] + present[mid]) / 2;

  let std = NaN;
  if (count > 1) {
    const squares = zeroFilled; // reused: 0 stays at missing rows, as pandas masks them to 0
    for (let i = 0; i < n; i++) if (!Number.isNaN(values[i])) squares[i] = (mean - values[i]) ** 2;
    std = Math.sqrt(pairwiseSum(squares, 0, n) / (count - 1));
  }
  return { count, mean, max, min, median, std };
}

/**
 * Describes groups of rows over a fixed, ordered list of fields (spec §3.3): the result has keys
 * `<stat>/<field>` ordered by stat (mean, max, min, median, std) then by field, NaN stats omitted.
 * Fill rule: when std is NaN for every field, std becomes 0 for each field present in all rows.
 */
export class FieldDescriber {
  /** `keys[s][f]` = `<STAT_NAMES[s]>/<names[f]>`, built once (property keys are then reused). */
  private readonly keys: string[][];

  constructor(names: readonly string[]) {
    this.keys = STAT_NAMES.map((stat) => names.map((name) => `${stat}/${name}`));
  }

  /** The stats object of one group; `columns[f]` holds field f for every row, NaN where absent. */
  describe(columns: readonly Float64Array[]): Record<string, number> {
    const stats = columns.map(columnStats);
    if (stats.every((s) => Number.isNaN(s.std))) {
      stats.forEach((s, f) => {
        if (s.count === columns[f].length) s.std = 0;
      });
    }
    const described: Record<string, number> = {};
    STAT_NAMES.forEach((stat, s) => {
      stats.forEach((column, f) => {
        if (!Number.isNaN(column[stat])) described[this.keys[s][f]] = column[stat];
      });
    });
    return described;
  }
}
