/**
 * What the live estimate (src/stats/run-estimate.ts) takes from a `--rollouts` row: its task (the
 * raw `_ng_task_index` text, which groups rows into the estimate's units) and its old `reward`.
 * One rule for both readers (`pairedFactsOf`), so the batches (their payloads, payload.ts) and the
 * count of planned units (`pairedFactsOfLine`) agree on tasks.
 */
import { TASK_INDEX_KEY } from './keys.js';
import { rawValuesOfLine } from './line-values.js';

export interface PairedFacts {
  task: string;
  reward: number | null;
}

/** The row's task (empty when it has none) and its numeric `reward` (null: absent or not a number); `raw(key)`: the raw text of a top-level value. */
export function pairedFactsOf(raw: (key: string) => string | undefined): PairedFacts {
  const reward = Number(raw('reward') ?? Number.NaN);
  return { task: raw(TASK_INDEX_KEY) ?? '', reward: Number.isFinite(reward) ? reward : null };
}

/**
 * `pairedFactsOf` a row's UTF-8 bytes, scanned as they are (no string of the whole row; the last of
 * repeated keys wins, as in every reader of rows). For the count of a plan's units, which reads
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
