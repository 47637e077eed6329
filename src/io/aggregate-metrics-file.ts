/**
 * Aggregation shared by a run's aggregate phase (spec §4.13) and `reverify aggregate` (§4.15):
 * rows grouped by (agent, resources server) in first-seen order, each group's rows stripped and
 * streamed from disk in key order as one `/aggregate_metrics` body, and the metrics file (§1.7)
 * with one entry per group in completion order. Rows are referred to by their place (file, byte
 * offset, length) and read back when sent, so memory holds places, never rows.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { compareKeys, type RowKey } from '../contract/row-key.js';
import type { AgentKeyMetrics } from '../contract/run-spec.js';
import { writeFileAtomic } from './atomic-file.js';
import { readRange } from './read-range.js';

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

/**
 * Reads rows by place from a set of files, keeping at most `maxOpen` of them open (least recently
 * used closed first), so thousands of shards do not exhaust file descriptors. One reader serves
 * one sequence of reads at a time.
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
      this.handles.set(file, fh);
      return fh;
    }
    if (this.handles.size >= this.maxOpen) {
      const [oldest, old] = this.handles.entries().next().value as [number, FileHandle];
      this.handles.delete(oldest);
      await old.close();
    }
    fh = await open(this.files[file], 'r');
    this.handles.set(file, fh);
    return fh;
  }

  /** The row's text (UTF-8). */
  async text(place: RowPlace): Promise<string> {
    return readRange(await this.handle(place.file), place.offset, place.length);
  }

  /** Reads the row's bytes into `buf` at `at` (which must have room for `place.length` bytes). */
  async bytesInto(place: RowPlace, buf: Buffer, at: number): Promise<void> {
    const fh = await this.handle(place.file);
    let done = 0;
    while (done < place.length) {
      const { bytesRead } = await fh.read(buf, at + done, place.length - done, place.offset + done);
      if (bytesRead === 0) {
        throw new Error(
          `unexpected end of file at byte ${place.offset + done} of ${this.files[place.file]} (the file changed while it was being read)`,
        );
      }
      done += bytesRead;
    }
  }

  /** Closes every open file. */
  async close(): Promise<void> {
    const open = [...this.handles.values()];
    this.handles.clear();
    await Promise.all(open.map((fh) => fh.close()));
  }
}

/** The `/aggregate_metrics` body of `rows`, each read from disk and stripped, streamed in order (spec §2.3). */
export async function* aggregateRequestBody(
  files: readonly string[],
  rows: readonly RowPlace[],
  strip: (rowRaw: string) => string,
): AsyncGenerator<string> {
  const reader = new RowReader(files);
  try {
    yield '{"verify_responses":[';
    for (let i = 0; i < rows.length; i++) yield (i ? ',' : '') + strip(await reader.text(rows[i]));
    yield ']}';
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
