/**
 * What the live estimate (src/stats/run-estimate.ts) takes from a `--rollouts` row: its task (the
 * raw `_ng_task_index` text, which groups rows into the estimate's units) and its old `reward`.
 * One function for both readers, so the batches and the count of planned units agree on tasks.
 */
import { topLevelSpans } from './json-spans.js';
import { TASK_INDEX_KEY } from './keys.js';

/** The row's task (empty when it has none) and its numeric `reward` (null: absent or not a number). */
export function pairedFacts(rolloutRaw: string): PairedFacts {
  const spans = topLevelSpans(rolloutRaw);
  return pairedFactsOf((key) => {
    const s = spans.get(key);
    return s === undefined ? undefined : rolloutRaw.slice(s.start, s.end);
  });
}

export interface PairedFacts {
  task: string;
  reward: number | null;
}

/** `pairedFacts` from a row already scanned: `raw(key)` is the raw text of a top-level value. */
export function pairedFactsOf(raw: (key: string) => string | undefined): PairedFacts {
  const reward = Number(raw('reward') ?? Number.NaN);
  return { task: raw(TASK_INDEX_KEY) ?? '', reward: Number.isFinite(reward) ? reward : null };
}

/** A reward the estimate can take: a number in [0, 1] (the contract's scores). */
export function inUnitRange(r: number | null): r is number {
  return r !== null && r >= 0 && r <= 1;
}
