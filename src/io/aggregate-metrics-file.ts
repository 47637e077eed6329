/**
 * Aggregation shared by a run's aggregate phase (spec §4.13) and `reverify aggregate` (§4.15):
 * rows grouped by (agent, resources server) in first-seen order, each group's rows stripped and
 * streamed from disk in key order as one `/aggregate_metrics` body, and the metrics file (§1.7)
 * with one entry per group in completion order. Rows are referred to by their place (file, byte
 * offset, length) and read back when sent, so memory holds places, never rows.
 */
import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { compareKeys, type RowKey } from '../contract/row-key.js';
import type { AgentKeyMetrics } from '../contract/run-spec.js';
import { writeFileAtomic } from './atomic-file.js';

/** Where one row sits: `files[file]`, bytes `[offset, offset + length)` (no line terminator). */
export interface RowPlace {
  key: RowKey;
  file: number;
  offset: number;
  length: number;
}

/** The rows of one agent that go to one resources server. */
export interface AggregateGroup {
  agent: string;
  server: string;
  rows: RowPlace[];
}

/** What aggregation reads from a parsed row: `agent_ref.name` and `task_source` (for `resolveServer`). */
export interface AggregationTarget {
  agent: string;
  taskSource: string | undefined;
}

/**
 * The agent name and task source of a parsed row; `null` for a row without a string
 * `agent_ref.name`, which aggregation skips (spec §4.13 step 2).
 */
export function aggregationTargetOf(row: Record<string, unknown>): AggregationTarget | null {
  const agent = (row.agent_ref as { name?: unknown } | undefined)?.name;
  if (typeof agent !== 'string') return null;
  return { agent, taskSource: typeof row.task_source === 'string' ? row.task_source : undefined };
}

/** Groups rows by (agent, server), keeping the order in which groups are first seen. */
export class AggregateGroups {
  private readonly byId = new Map<string, AggregateGroup>();

  /** Adds a row to the group of (agent, server). */
  add(agent: string, server: string, place: RowPlace): void {
    const id = `${agent}\u0000${server}`;
    let g = this.byId.get(id);
    if (!g) this.byId.set(id, (g = { agent, server, rows: [] }));
    g.rows.push(place);
  }

  /** The groups, in first-seen order. */
  list(): AggregateGroup[] {
    return [...this.byId.values()];
  }
}

/** Rows read per batch at most. */
export const READ_BATCH_ROWS = 256;
/** Bytes read per batch at most (a batch always holds at least one row). */
const READ_BATCH_BYTES = 8 << 20;

/**
 * Splits `rows[from..]` into the next read batch: at most `READ_BATCH_ROWS` rows and `maxBytes`
 * bytes, at least one row. Returns the end index (exclusive).
 */
export function readBatchEnd(rows: readonly RowPlace[], from: number, maxBytes = READ_BATCH_BYTES): number {
  let end = from;
  let bytes = 0;
  while (end < rows.length && end - from < READ_BATCH_ROWS && (end === from || bytes + rows[end].length <= maxBytes)) {
    bytes += rows[end].length;
    end++;
  }
  return end;
}

function readExact(fh: FileHandle, path: string, place: RowPlace, buf: Buffer, at: number): void {
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
 * Reads rows by place from a set of files, a batch of rows at a time. Rows in key order are
 * scattered over the files, so this is one positioned read per row; they are SYNCHRONOUS reads:
 * from the page cache a `readSync` takes a few µs where an async `FileHandle.read` round trip
 * through libuv's thread pool takes 25–125 µs, which made reading dominate aggregation. A batch
 * (at most `READ_BATCH_ROWS` rows / 8 MiB) blocks the event loop for about a millisecond when
 * cached; callers await between batches. Keeps at most `maxOpen` files open (least recently used
 * closed first), so thousands of shards do not exhaust file descriptors.
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

  /** Reads `places` (a batch, see `readBatchEnd`) into `buf` at `at[i]` (room for each row's bytes). */
  async bytesInto(places: readonly RowPlace[], buf: Buffer, at: readonly number[]): Promise<void> {
    for (let i = 0; i < places.length; i++) {
      const p = places[i];
      readExact(await this.handle(p.file), this.files[p.file], p, buf, at[i]);
      await this.trim();
    }
  }

  /** The rows' texts (UTF-8), in order. */
  async texts(places: readonly RowPlace[]): Promise<string[]> {
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
  async text(place: RowPlace): Promise<string> {
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
 * The `/aggregate_metrics` body of `rows`, each read from disk and stripped, streamed in order
 * (spec §2.3) in chunks of about `BODY_CHUNK_CHARS`.
 */
export async function* aggregateRequestBody(
  files: readonly string[],
  rows: readonly RowPlace[],
  strip: (rowRaw: string) => string,
): AsyncGenerator<string> {
  const reader = new RowReader(files);
  try {
    let chunk = '{"verify_responses":[';
    for (let i = 0; i < rows.length; ) {
      const end = readBatchEnd(rows, i);
      const texts = await reader.texts(rows.slice(i, end));
      for (const text of texts) {
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

/** The three fields of a `/aggregate_metrics` reply (spec §2.3). */
export interface AggregateReply {
  group_level_metrics: unknown[];
  agent_metrics: Record<string, unknown>;
  key_metrics: Record<string, unknown>;
}

/** One entry of `<out>_aggregate_metrics.json` (spec §1.7). */
export interface AggregateMetricsEntry extends AggregateReply {
  agent_ref: { name: string };
}

/** Sends one group's body to a resources server's `/aggregate_metrics`. */
export type PostAggregateMetrics = (server: string, body: AsyncIterable<string>) => Promise<AggregateReply>;

/**
 * Per group, concurrently: sort its rows by key (stable, so equal keys keep file order), POST the
 * stripped rows, and record the reply; then write `metricsPath` (a JSON array, 2-space indent, no
 * trailing newline, entries in completion order) atomically. No groups: no request and no file,
 * `metricsPath: null`. A failed request rejects, and the file is not written.
 */
export async function aggregateToMetricsFile(args: {
  files: readonly string[];
  groups: AggregateGroup[];
  strip: (rowRaw: string) => string;
  post: PostAggregateMetrics;
  metricsPath: string;
}): Promise<{ metricsPath: string | null; keyMetrics: AgentKeyMetrics[] }> {
  if (args.groups.length === 0) return { metricsPath: null, keyMetrics: [] };
  const entries: AggregateMetricsEntry[] = [];
  const keyMetrics: AgentKeyMetrics[] = [];
  await Promise.all(
    args.groups.map(async (g) => {
      g.rows.sort((a, b) => compareKeys(a.key, b.key));
      const m = await args.post(g.server, aggregateRequestBody(args.files, g.rows, args.strip));
      entries.push({
        agent_ref: { name: g.agent },
        agent_metrics: m.agent_metrics,
        key_metrics: m.key_metrics,
        group_level_metrics: m.group_level_metrics,
      });
      keyMetrics.push({ agent: g.agent, keyMetrics: m.key_metrics });
    }),
  );
  await writeFileAtomic(args.metricsPath, JSON.stringify(entries, null, 2));
  return { metricsPath: args.metricsPath, keyMetrics };
}
