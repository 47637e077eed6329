/**
 * How a scored rollout measures (the run store's coverage: `measured`, `masked`, `unscored`): its
 * result has a numeric `reward` (a bool is none, as in NeMo Gym's type check), and its producer did
 * not mask it (`mask_sample`). Read from raw member texts, without parsing the row.
 */
import { rawTruthy } from './python-truthiness.js';

export type Measure = 'measured' | 'masked' | 'unscored';

/** The `Measure` of a result from the raw texts of its `reward` and `mask_sample` (undefined: absent). */
export function measureOf(rawReward: string | undefined, rawMask: string | undefined): Measure {
  const r = rawReward?.trim() ?? '';
  // Python's json writes NaN and Infinity for floats: numbers too.
  const c = r.charAt(0);
  const numeric = c === '-' || c === 'N' || c === 'I' || (c >= '0' && c <= '9');
  if (!numeric) return 'unscored';
  return rawTruthy(rawMask ?? 'null') ? 'masked' : 'measured';
}
