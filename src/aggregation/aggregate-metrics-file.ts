/**
 * Aggregation shared by a run's aggregate phase (spec §4.13) and `reverify aggregate` (§4.15):
 * rows grouped by (agent, resources server) in first-seen order (`aggregate-groups.ts`), each
 * group's rows stripped and streamed from disk in key order as one `/aggregate_metrics` body, and
 * the metrics file (§1.7) with one entry per group in completion order. Rows are referred to by
 * their place (file, byte offset, length) and read back when sent; places wait in files sorted by
 * key, so memory holds neither rows nor places: it is flat in the number of rows.
 */
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { RowKey } from '../contract/row-key.js';
import { rowRouteOf, runKeyOf, type RowRoute } from '../contract/row-route.js';
import type { AgentKeyMetrics } from '../contract/run-spec.js';
import type { SortedGroup } from './aggregate-groups.js';
import { AGGREGATE_FIELDS, type AggregateReplyFile } from './aggregate-reply.js';
import { publishFile } from '../io/atomic-file.js';
import { copyJsonIndented, OutputBuffer } from '../io/json-file-members.js';
import { readPlaceFile, type Place } from './place-file.js';

/** A row's key and where it sits: `files[file]`, bytes `[offset, offset + length)` (no line terminator). */
export interface RowPlace extends Place {
  key: RowKey;
}

/** What aggregation reads from a parsed row: the run it belongs to, and its routing fields (for `resolveServer`). */
export interface AggregationTarget {
  /** `rollout_run_key`: the environment-server stamp, else the agent's name. */
  runKey: string;
  route: RowRoute;
}

/**
 * A parsed output row's run key and routing fields (NeMo Gym 0.7.0); `null` for a row with neither
 * a string `_ng_environment_server` nor a string `agent_ref.name`, which aggregation skips (spec
 * §4.13 step 2).
 */
export function aggregationTargetOf(row: Record<string, unknown>): AggregationTarget | null {
  const route = rowRouteOf(row);
  const runKey = runKeyOf(route);
  return runKey === undefined ? null : { runKey, route };
}

/** Rows read per batch at most. */
export const READ_BATCH_ROWS = 256;
/** Bytes read per batch at most (a batch always holds at least one row). */
const READ_BATCH_BYTES = 8 << 20;

/**
 * Splits a stream of places into read batches, in order: each at most `READ_BATCH_ROWS` rows and
 * `maxBytes` bytes, and at least one row (a row larger than `maxBytes` is a batch of its own).
 */
export async function* readBatches<P extends Place>(places: AsyncIterable<P>, maxBytes = READ_BATCH_BYTES): AsyncGenerator<P[]> {
  let batch: P[] = [];
  let bytes = 0;
  for await (const p of places) {
    if (batch.length > 0 && (batch.length === READ_BATCH_ROWS || bytes + p.length > maxBytes)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(p);
    bytes += p.length;
  }
  if (batch.length > 0) yield batch;
}

function readExact(fh: FileHandle, path: string, place: Place, buf: Buffer, at: number): void {
  let done = 0;
  while (done < place.length) {
    const n = readSync(fh.fd, buf, at + done, place.length - done, place.offset + done);
    if (n === 0) {
      throw new Error(`unexpected end of file at byte ${place.offset + done} of ${path} (the file changed while it was being read)`);
    }
    done += n;
  }
}

/**
 * Reads rows by place from a set of files, a batch of rows at a time (see `readBatches`). Rows in
 * key order are scattered over the files, so this is one positioned read per row; they are
 * SYNCHRONOUS reads: from the page cache a `readSync` takes a few µs where an async
 * `FileHandle.read` round trip through libuv's thread pool takes 25–125 µs, which made reading
 * dominate aggregation. A batch (at most `READ_BATCH_ROWS` rows / 8 MiB) blocks the event loop for
 * about a millisecond when cached; callers await between batches. Keeps at most `maxOpen` files
 * open (least recently used closed first), so thousands of shards do not exhaust file descriptors.
 */
export class RowReader {
  private readonly handles = new Map<number, FileHandle>();

  constructor(
    private readonly files: readonly string[],
    private readonly maxOpen = 64,
  ) {}

  private async handle(file: number): Promise<FileHandle> {
    let fh = this.handles.get(file);
    if (fh) {
      this.handles.delete(file);
    } else {
      fh = await open(this.files[file], 'r');
    }
    this.handles.set(file, fh);
    return fh;
  }

  private async trim(): Promise<void> {
    while (this.handles.size > this.maxOpen) {
      const [oldest, fh] = this.handles.entries().next().value as [number, FileHandle];
      this.handles.delete(oldest);
      await fh.close();
    }
  }

  /** Reads `places` (a batch, see `readBatches`) into `buf` at `at[i]` (room for each row's bytes). */
  async bytesInto(places: readonly Place[], buf: Buffer, at: readonly number[]): Promise<void> {
    for (let i = 0; i < places.length; i++) {
      const p = places[i];
      readExact(await this.handle(p.file), this.files[p.file], p, buf, at[i]);
      await this.trim();
    }
  }

  /** The rows' texts (UTF-8), in order. */
  async texts(places: readonly Place[]): Promise<string[]> {
    const at: number[] = [];
    let total = 0;
    for (const p of places) {
      at.push(total);
      total += p.length;
    }
    const buf = Buffer.allocUnsafe(total);
    await this.bytesInto(places, buf, at);
    return places.map((p, i) => buf.toString('utf8', at[i], at[i] + p.length));
  }

  /** One row's text (UTF-8). */
  async text(place: Place): Promise<string> {
    return (await this.texts([place]))[0];
  }

  /** Closes every open file. */
  async close(): Promise<void> {
    const open = [...this.handles.values()];
    this.handles.clear();
    await Promise.all(open.map((fh) => fh.close()));
  }
}

/** Body chunks are about this many characters: one socket write per chunk, not per row. */
const BODY_CHUNK_CHARS = 256 * 1024;

/**
 * The `/aggregate_metrics` body of `rows` (places, in the order to send), each read from disk and
 * stripped, streamed in order (spec §2.3) in chunks of about `BODY_CHUNK_CHARS`.
 */
export async function* aggregateRequestBody(
  files: readonly string[],
  rows: AsyncIterable<Place>,
  strip: (rowRaw: string) => string,
): AsyncGenerator<string> {
  const reader = new RowReader(files);
  try {
    let chunk = '{"verify_responses":[';
    let i = 0;
    for await (const batch of readBatches(rows)) {
      for (const text of await reader.texts(batch)) {
        chunk += (i++ ? ',' : '') + strip(text);
        if (chunk.length >= BODY_CHUNK_CHARS) {
          yield chunk;
          chunk = '';
        }
      }
    }
    yield chunk + ']}';
  } finally {
    await reader.close();
  }
}

/**
 * Sends one group's body to a resources server's `/aggregate_metrics`; the reply goes to the file
 * `replyPath` (see `readAggregateReply`).
 */
export type PostAggregateMetrics = (server: string, body: AsyncIterable<string>, replyPath: string) => Promise<AggregateReplyFile>;

let tmpCounter = 0;

/**
 * Writes `<out>_aggregate_metrics.json` (spec §1.7) from replies on disk, laid out exactly as
 * `JSON.stringify(entries, null, 2)` would (2-space indent, no trailing newline), one entry per
 * agent: `agent_ref`, `agent_metrics`, `key_metrics`, `group_level_metrics`. Streams: memory holds
 * a chunk, whatever the size of the replies. Atomic: temp file, fsync, rename.
 */
export async function writeMetricsFile(path: string, entries: ReadonlyArray<{ agent: string; reply: AggregateReplyFile }>): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${++tmpCounter}`;
  const fh = await open(tmp, 'w');
  try {
    const out = new OutputBuffer(fh);
    out.text('[');
    for (const [i, { agent, reply }] of entries.entries()) {
      out.text(`${i ? ',' : ''}\n  {\n    "agent_ref": {\n      "name": ${JSON.stringify(agent)}\n    }`);
      for (const field of AGGREGATE_FIELDS) {
        out.text(`,\n    "${field}": `);
        const span = reply.spans[field];
        if (span) await copyJsonIndented(reply.path, span, 2, out);
        else out.text(field === 'group_level_metrics' ? '[]' : '{}');
      }
      out.text('\n  }');
    }
    out.text(entries.length ? '\n]' : ']');
    await out.drain();
    await fh.sync();
  } finally {
    await fh.close();
  }
  await publishFile(tmp, path);
}

/**
 * Per group, concurrently: POST its stripped rows, read in key order from its place file (see
 * `AggregateGroups.sorted`), the reply going to a file in `scratchDir`; then write `metricsPath`
 * (entries in completion order) from the replies on disk. No groups: no request and no file,
 * `metricsPath: null`. A failed request rejects, and the file is not written.
 */
export async function aggregateToMetricsFile(args: {
  files: readonly string[];
  groups: readonly SortedGroup[];
  strip: (rowRaw: string) => string;
  post: PostAggregateMetrics;
  metricsPath: string;
  /** Where the replies are written (a scratch directory the caller removes). */
  scratchDir: string;
}): Promise<{ metricsPath: string | null; keyMetrics: AgentKeyMetrics[] }> {
  if (args.groups.length === 0) return { metricsPath: null, keyMetrics: [] };
  const entries: Array<{ agent: string; reply: AggregateReplyFile }> = [];
  await Promise.all(
    args.groups.map(async (g, i) => {
      const body = aggregateRequestBody(args.files, readPlaceFile(g.placesPath), args.strip);
      const reply = await args.post(g.server, body, join(args.scratchDir, `reply${i}.json`));
      entries.push({ agent: g.agent, reply });
    }),
  );
  await writeMetricsFile(args.metricsPath, entries);
  return { metricsPath: args.metricsPath, keyMetrics: entries.map((e) => ({ agent: e.agent, keyMetrics: e.reply.keyMetrics })) };
}
