/**
 * The rows of sharded outputs for `reverify aggregate` (spec §4.15): read every non-blank line of
 * every shard once, keep only its place (shard, byte offset, length, line number) and key, find
 * duplicate keys before anything is written or sent, and write the merged file sorted by key with
 * every line copied byte for byte. Memory holds one small record per row, never the rows.
 */
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError, InputError } from '../contract/errors.js';
import { ROLLOUT_INDEX_KEY, TASK_INDEX_KEY } from '../contract/keys.js';
import { malformedShard } from '../contract/messages.js';
import { compareKeys, formatKey, keyId, keyOf, lineKeyId, type RowKey } from '../contract/row-key.js';
import { fsyncDir } from './atomic-file.js';
import { READ_BATCH_ROWS, readBatchEnd, RowReader, type RowPlace } from './aggregate-metrics-file.js';
import { isBlank, jsonlLines } from './jsonl-lines.js';

/** One shard row: its place plus its 1-based line number (for `file:line` messages). */
export interface ShardRow extends RowPlace {
  line: number;
}

const MAX_DETAIL_CHARS = 300;

function detailOf(err: unknown): string {
  const text = String((err as Error)?.message ?? err).replace(/\s+/g, ' ');
  return text.length > MAX_DETAIL_CHARS ? text.slice(0, MAX_DETAIL_CHARS - 1) + '…' : text;
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string' ? 'a string' : `a ${typeof v}`;
}

/**
 * Streams every non-blank line of `shards[file]`, parsed. A line that is not JSON, or not a JSON
 * object, is a `ConfigError` `malformedShard(path, line, detail)`. A row without both indices (or
 * with a `null` or non-scalar one) is an `InputError` naming `path:line`: NeMo Gym would read the
 * missing index as null and then fail to sort it among numbers, or count the row as key (0, 0).
 * `visit` gets each row with its place (key set) and may throw to stop.
 */
export async function readShardRows(
  shards: readonly string[],
  visit: (row: Record<string, unknown>, place: ShardRow) => void,
): Promise<void> {
  for (let file = 0; file < shards.length; file++) {
    const path = shards[file];
    for await (const line of jsonlLines(path)) {
      if (isBlank(line.text)) continue;
      let row: unknown;
      try {
        row = JSON.parse(line.text);
      } catch (err) {
        throw new ConfigError(malformedShard(path, line.lineNo, detailOf(err)));
      }
      if (row === null || typeof row !== 'object' || Array.isArray(row)) {
        throw new ConfigError(malformedShard(path, line.lineNo, `expected a JSON object, got ${kindOf(row)}`));
      }
      const key = keyOf(row as Record<string, unknown>);
      if (key === null) {
        throw new InputError(
          `${path}:${line.lineNo}: row has no ${TASK_INDEX_KEY} or ${ROLLOUT_INDEX_KEY} (or one is null, an object or a list); ` +
            'every shard row needs both to be merged and aggregated by key: fix or remove this line, then run again',
        );
      }
      // `rawLength`: a `\r` before the `\n` is part of the verbatim copy (as in seeding).
      visit(row as Record<string, unknown>, { key, file, offset: line.offset, length: line.rawLength, line: line.lineNo });
    }
  }
}

/** Sorts rows by key; equal keys keep their reading order (shard order, then line order). */
export function sortShardRows<T extends RowPlace>(rows: T[]): T[] {
  return rows.sort((a, b) => compareKeys(a.key, b.key));
}

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

function isUnsafeNumber(p: unknown): boolean {
  return typeof p === 'number' && !Number.isSafeInteger(p) && Number.isInteger(p);
}

/**
 * The first duplicated key of rows SORTED by `sortShardRows`, or `null`. Equality is Python's
 * (`1`, `1.0` and `true` are one key; `"1"` differs), and exact for integers above 2^53: their
 * ids are recomputed from the raw line text, which is read back only for such keys.
 */
export async function findDuplicateKey(shards: readonly string[], rows: readonly ShardRow[]): Promise<DuplicateKey | null> {
  const reader = new RowReader(shards);
  try {
    let found: DuplicateKey | null = null;
    let duplicated = 0;
    const pairs = new Set<string>();
    for (let start = 0; start < rows.length; ) {
      let end = start + 1;
      while (end < rows.length && compareKeys(rows[start].key, rows[end].key) === 0) end++;
      if (end - start > 1) {
        const firstById = new Map<string, ShardRow>();
        const counted = new Set<string>();
        for (let i = start; i < end; i++) {
          const r = rows[i];
          const exact = isUnsafeNumber(r.key.task) || isUnsafeNumber(r.key.rollout);
          const id = exact ? (lineKeyId(await reader.text(r)) ?? keyId(r.key)) : keyId(r.key);
          const first = firstById.get(id);
          if (first === undefined) {
            firstById.set(id, r);
            continue;
          }
          if (counted.has(id)) continue;
          counted.add(id);
          duplicated++;
          pairs.add(`${first.file},${r.file}`);
          found ??= { key: r.key, first, second: r, more: 0, samePair: true };
        }
      }
      start = end;
    }
    if (found) {
      found.more = duplicated - 1;
      found.samePair = pairs.size === 1;
    }
    return found;
  } finally {
    await reader.close();
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
    `Duplicate key (${TASK_INDEX_KEY}, ${ROLLOUT_INDEX_KEY}) = ${formatKey(d.key)} at ${a}:${d.first.line} and ${b}:${d.second.line}${more}; ` +
    'each key must appear once across all shards. Remove the duplicate shard or the duplicate row, then run again ' +
    '(nothing was written or sent)'
  );
}

const WRITE_BUFFER_BYTES = 8 << 20;

/**
 * (Over)writes `output` with `rows` in the given order, each line copied byte for byte from its
 * shard (never parsed and re-serialised, so big integers, `1.0` and key order survive) and ended
 * with `\n`. Atomic: a temp file next to `output`, fsync, rename, fsync of the directory; parent
 * directories are created. Memory: one 8 MiB buffer (or one row, if larger).
 */
export async function writeMergedRows(output: string, shards: readonly string[], rows: readonly RowPlace[]): Promise<void> {
  await mkdir(dirname(output), { recursive: true });
  const tmp = `${output}.tmp-${process.pid}`;
  const reader = new RowReader(shards);
  const fh = await open(tmp, 'w');
  let ok = false;
  try {
    const buf = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
    for (let i = 0; i < rows.length; ) {
      // Room for each row and its `\n`: the batch's bytes plus one newline per row.
      const end = readBatchEnd(rows, i, WRITE_BUFFER_BYTES - READ_BATCH_ROWS);
      const batch = rows.slice(i, end);
      const at: number[] = [];
      let used = 0;
      for (const r of batch) {
        at.push(used);
        used += r.length + 1;
      }
      const target = used <= buf.length ? buf : Buffer.allocUnsafe(used); // one row larger than the buffer
      await reader.bytesInto(batch, target, at);
      for (let j = 0; j < batch.length; j++) target[at[j] + batch[j].length] = 0x0a;
      for (let w = 0; w < used; ) w += (await fh.write(target, w, used - w)).bytesWritten;
      i = end;
    }
    await fh.sync();
    ok = true;
  } finally {
    await fh.close();
    await reader.close();
    if (!ok) await rm(tmp, { force: true });
  }
  await rename(tmp, output);
  await fsyncDir(dirname(output));
}
