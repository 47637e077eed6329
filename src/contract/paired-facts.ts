/**
 * What the live estimate (src/stats/run-estimate.ts) takes from a `--rollouts` row: its task (the
 * raw `_ng_task_index` text, which groups rows into the estimate's units) and its old `reward`.
 * One function for both readers, so the batches and the count of planned units agree on tasks.
 */
import { topLevelSpans } from './json-spans.js';
import { TASK_INDEX_KEY } from './keys.js';
import { rawValuesOfLine } from './line-values.js';

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

/**
 * `pairedFacts` of a row's UTF-8 bytes, scanned as they are (no string of the whole row): the same
 * facts, the last of repeated keys winning likewise. For the count of a plan's units, which reads
 * every planned row (activities/count-paired-units.ts). Throws `SyntaxError` when the bytes are not
 * one JSON object.
 */
export function pairedFactsOfLine(line: Uint8Array): PairedFacts {
  const [task, reward] = rawValuesOfLine(line, FACT_KEYS);
  return pairedFactsOf((key) => (key === 'reward' ? reward : task));
}

const FACT_KEYS = [TASK_INDEX_KEY, 'reward'] as const;

/** A reward the estimate can take: a number in [0, 1] (the contract's scores). */
export function inUnitRange(r: number | null): r is number {
  return r !== null && r >= 0 && r <= 1;
}
