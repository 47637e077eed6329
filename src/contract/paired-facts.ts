/**
 * What the live estimate (src/stats/run-estimate.ts) takes from a `--rollouts` row: its task (the
 * raw `_ng_task_index` text, which groups rows into the estimate's units) and its old `reward`.
 * One function for both readers, so the batches and the count of planned units agree on tasks.
 */
import { scanObjectMembers } from './json-line-scan.js';
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

/**
 * `pairedFacts` of a row's UTF-8 bytes, scanned as they are (no string of the whole row): the same
 * facts, the last of repeated keys winning likewise. For the count of a plan's units, which reads
 * every planned row (activities/count-paired-units.ts). Throws `SyntaxError` when the bytes are not
 * one JSON object.
 */
export function pairedFactsOfLine(line: Uint8Array): PairedFacts {
  const scan = scanObjectMembers(line);
  if ('reason' in scan) throw new SyntaxError(`not a single JSON object: ${scan.reason} at byte ${scan.at}`);
  const m = scan.members;
  let task = -1;
  let reward = -1;
  for (let k = 0; k < m.length; k += 4) {
    if (keyIs(line, m[k], m[k + 1], TASK_INDEX_KEY)) task = k;
    else if (keyIs(line, m[k], m[k + 1], 'reward')) reward = k;
  }
  const value = (k: number) => (k < 0 ? undefined : utf8.decode(line.subarray(m[k + 2], m[k + 3])));
  return pairedFactsOf((key) => value(key === 'reward' ? reward : task));
}

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const BACKSLASH = 0x5c;

/** Whether the key whose quoted text is `line[start, end)` is `key` (an ASCII name), escapes decoded. */
function keyIs(line: Uint8Array, start: number, end: number, key: string): boolean {
  const n = end - start - 2;
  if (n === key.length) {
    let k = 0;
    while (k < n && line[start + 1 + k] === key.charCodeAt(k)) k++;
    return k === n;
  }
  // Written with escapes (`"rew\u0061rd"`), a key is longer than its name: decoded, as topLevelSpans does.
  if (n < key.length) return false;
  let k = start + 1;
  while (k < end - 1 && line[k] !== BACKSLASH) k++;
  return k < end - 1 && JSON.parse(utf8.decode(line.subarray(start, end))) === key;
}

/** A reward the estimate can take: a number in [0, 1] (the contract's scores). */
export function inUnitRange(r: number | null): r is number {
  return r !== null && r >= 0 && r <= 1;
}
