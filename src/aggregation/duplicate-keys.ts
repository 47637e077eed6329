/**
 * Duplicate keys across the shards of `reverify aggregate` (spec §4.15), found before anything is
 * written or sent, in flat memory: the rows are sorted by their exact key id (an external sort,
 * stable, so a key's rows stay in reading order) and neighbours are compared.
 */
import { ROLLOUT_INDEX_KEY, TASK_INDEX_KEY } from '../contract/keys.js';
import { compareKeys, formatKeyExactly, type RowKey } from '../contract/row-key.js';
import { ExternalSorter } from '../io/external-sort.js';
import { shardRowCodec, type ShardRow, type ShardSortOptions } from './shard-rows.js';

/** A key found more than once: its first two places and how many other keys are duplicated too. */
export interface DuplicateKey {
  key: RowKey;
  first: ShardRow;
  second: ShardRow;
  /** Distinct duplicated keys besides `key`. */
  more: number;
  /** True when every duplicated key is in the same two files as `key` (one shard repeats another). */
  samePair: boolean;
}

/** True when `a` is reported before `b`: the lower key (spec §4.11 order), then the earlier second row. */
function reportedFirst(a: DuplicateKey, b: DuplicateKey): boolean {
  const c = compareKeys(a.key, b.key);
  if (c !== 0) return c < 0;
  return a.second.file !== b.second.file ? a.second.file < b.second.file : a.second.line < b.second.line;
}

/**
 * Collects shard rows (`add`, in reading order: shard, then line) and finds the duplicated keys
 * (`find`). Equality is Python's, exact for integers above 2^53 (`ShardRow.id`).
 */
export class DuplicateKeyFinder {
  private readonly sorter: ExternalSorter<ShardRow>;

  constructor(opts: ShardSortOptions) {
    this.sorter = new ExternalSorter({
      ...opts,
      name: 'key-ids',
      compare: (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      codec: shardRowCodec,
    });
  }

  async add(row: ShardRow): Promise<void> {
    await this.sorter.add(row);
  }

  /**
   * The duplicated key to report, or `null`: of the keys found more than once, the lowest in key
   * order (ties, which only big integers that round alike make: the one whose second row comes
   * first), with its first two rows in reading order. Call once, after the last `add`.
   */
  async find(): Promise<DuplicateKey | null> {
    let found: DuplicateKey | null = null;
    let duplicated = 0;
    let pair: string | null = null;
    let samePair = true;
    let first: ShardRow | null = null;
    let seen = 0;
    for await (const r of this.sorter.sorted()) {
      if (first === null || r.id !== first.id) {
        first = r;
        seen = 1;
        continue;
      }
      if (++seen !== 2) continue;
      duplicated++;
      const p = `${first.file},${r.file}`;
      pair ??= p;
      if (p !== pair) samePair = false;
      const d: DuplicateKey = { key: r.key, first, second: r, more: 0, samePair: true };
      if (found === null || reportedFirst(d, found)) found = d;
    }
    if (found) {
      found.more = duplicated - 1;
      found.samePair = samePair;
    }
    return found;
  }
}

/** The one-line error for a duplicate key: the key, both `file:line` places, and what to do. */
export function duplicateKeyMessage(shards: readonly string[], d: DuplicateKey): string {
  const a = shards[d.first.file];
  const b = shards[d.second.file];
  let more = '';
  if (d.more > 0) {
    more = ` (and ${d.more} more duplicated key${d.more === 1 ? '' : 's'}`;
    if (d.samePair) more += a === b ? `, all within ${a}` : `, all in both ${a} and ${b}: is one a copy of the other?`;
    more += ')';
  }
  return (
    `Duplicate key (${TASK_INDEX_KEY}, ${ROLLOUT_INDEX_KEY}) = ${formatKeyExactly(d.key, d.second.id)} at ${a}:${d.first.line} and ${b}:${d.second.line}${more}; ` +
    'each key must appear once across all shards. Remove the duplicate shard or the duplicate row, then run again ' +
    '(nothing was written or sent)'
  );
}
