/**
 * The rows of sharded outputs for `reverify aggregate` (spec §4.15): read every non-blank line of
 * every shard once, keep only its place (shard, byte offset, length, line number) and key, and
 * write the merged file sorted by key with every line copied byte for byte. Rows are sorted by an
 * external sort (`shardRowSorter`), so memory is flat in the number of rows; duplicate keys are
 * found the same way (`duplicate-keys.ts`) before anything is written or sent.
 */
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError, InputError } from '../contract/errors.js';
import { ROLLOUT_INDEX_KEY, TASK_INDEX_KEY } from '../contract/keys.js';
import { malformedShard } from '../contract/messages.js';
import { compareKeys, keyId, keyOf, lineKeyId, type RowKey } from '../contract/row-key.js';
import { fsyncDir } from '../io/atomic-file.js';
import type { RowPlace } from './aggregate-metrics-file.js';
import { READ_BATCH_ROWS, readBatches, RowReader } from './row-reader.js';
import { ExternalSorter, type RecordCodec } from '../io/external-sort.js';
import { isBlank, jsonlLines } from '../io/jsonl-lines.js';
import { writingTo } from '../io/write-errors.js';
import { writeFully } from '../io/write-fully.js';
import { readRowKey, readString, rowKeySize, stringSize, writeRowKey, writeString } from '../io/row-key-codec.js';

/** One shard row: its place plus its 1-based line number (for `file:line` messages) and exact key id. */
export interface ShardRow extends RowPlace {
  line: number;
  /**
   * The key's canonical id (`keyId`): equal exactly when Python's tuples are equal (`1`, `1.0` and
   * `true` are one key; `"1"` differs), and exact for integers above 2^53, whose id is computed from
   * the line's raw text (`lineKeyId`) since `key` holds them rounded.
   */
  id: string;
}

/** How a shard row is written to an external sort's run file (lossless). */
export const shardRowCodec: RecordCodec<ShardRow> = {
  size: (r) => 20 + stringSize(r.id) + rowKeySize(r.key),
  write(r, buf, at) {
    buf.writeUInt32LE(r.file, at);
    buf.writeDoubleLE(r.offset, at + 4);
    buf.writeUInt32LE(r.length, at + 12);
    buf.writeUInt32LE(r.line, at + 16);
    writeRowKey(r.key, buf, writeString(r.id, buf, at + 20));
  },
  read(buf, at) {
    const [id, p] = readString(buf, at + 20);
    const [key] = readRowKey(buf, p);
    return {
      file: buf.readUInt32LE(at),
      offset: buf.readDoubleLE(at + 4),
      length: buf.readUInt32LE(at + 12),
      line: buf.readUInt32LE(at + 16),
      id,
      key,
    };
  },
};

/** Where an external sort of shard rows puts its run files, and how much it holds in memory. */
export interface ShardSortOptions {
  /** A scratch directory the caller removes afterwards. */
  dir: string;
  /** Records held in memory before a run file is written. */
  maxRecords?: number;
}

/**
 * An external sort of shard rows by key (spec §4.11 order, `compareKeys`). Stable: equal keys keep
 * the order rows were added (shard order, then line order), as the merged file lists them.
 */
export function shardRowSorter(opts: ShardSortOptions): ExternalSorter<ShardRow> {
  return new ExternalSorter({ ...opts, name: 'merged-rows', compare: (a, b) => compareKeys(a.key, b.key), codec: shardRowCodec });
}

function isUnsafeNumber(p: unknown): boolean {
  return typeof p === 'number' && !Number.isSafeInteger(p) && Number.isInteger(p);
}

/** `ShardRow.id` of a row whose parsed key is `key` and whose line text is `text`. */
function exactKeyId(key: RowKey, text: string): string {
  const exact = isUnsafeNumber(key.task) || isUnsafeNumber(key.rollout);
  return exact ? (lineKeyId(text) ?? keyId(key)) : keyId(key);
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
 * `visit` gets each row with its place (key and id set), is awaited, and may throw to stop.
 */
export async function readShardRows(
  shards: readonly string[],
  visit: (row: Record<string, unknown>, place: ShardRow) => void | Promise<void>,
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
      const place = { key, id: exactKeyId(key, line.text), file, offset: line.offset, length: line.rawLength, line: line.lineNo };
      await visit(row as Record<string, unknown>, place);
    }
  }
}

const WRITE_BUFFER_BYTES = 8 << 20;

/**
 * (Over)writes `output` with `rows` in the given order, each line copied byte for byte from its
 * shard (never parsed and re-serialised, so big integers, `1.0` and key order survive) and ended
 * with `\n`. Atomic: a temp file next to `output`, fsync, rename, fsync of the directory; parent
 * directories are created. Memory: one 8 MiB buffer (or one row, if larger).
 */
export async function writeMergedRows(output: string, shards: readonly string[], rows: AsyncIterable<RowPlace>): Promise<void> {
  await mkdir(dirname(output), { recursive: true });
  const tmp = `${output}.tmp-${process.pid}`;
  const reader = new RowReader(shards);
  const fh = await writingTo(output, () => open(tmp, 'w'));
  let ok = false;
  try {
    const buf = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
    // Room for each row and its `\n`: the batch's bytes plus one newline per row.
    for await (const batch of readBatches(rows, WRITE_BUFFER_BYTES - READ_BATCH_ROWS)) {
      const at: number[] = [];
      let used = 0;
      for (const r of batch) {
        at.push(used);
        used += r.length + 1;
      }
      const target = used <= buf.length ? buf : Buffer.allocUnsafe(used); // one row larger than the buffer
      await reader.bytesInto(batch, target, at);
      for (let j = 0; j < batch.length; j++) target[at[j] + batch[j].length] = 0x0a;
      await writeFully(fh, target.subarray(0, used), null, output);
    }
    await writingTo(output, () => fh.sync());
    ok = true;
  } finally {
    await fh.close();
    await reader.close();
    if (!ok) await rm(tmp, { force: true });
  }
  await rename(tmp, output);
  await fsyncDir(dirname(output));
}
