/**
 * Sorting more records than memory should hold: records are kept in memory up to a budget, sorted
 * and written to a run file whenever the budget fills, and the runs are merged back in one
 * streaming pass (a heap over one buffered reader per run). Memory is the budget plus one read
 * buffer per run, whatever the number of records; a sort that fits the budget never touches disk.
 * The plan, seeding, re-judgment and aggregation phases use it to join rows by key in flat memory.
 * Run files are written and read in sort-run-files.ts, merged in run-merge.ts.
 */
import { rm } from 'node:fs/promises';
import { getHeapStatistics } from 'node:v8';
import { collectGarbage } from './collect-garbage.js';
import { mergeRuns } from './run-merge.js';
import { FRAME_HEADER, writeRun, type RecordCodec } from './sort-run-files.js';

export type { RecordCodec } from './sort-run-files.js';

export interface SorterOptions<T> {
  /** Where run files go (a work directory the caller removes, or `dispose()` cleans). */
  dir: string;
  /** Run files are `<dir>/<name>.run<N>`. */
  name: string;
  compare: (a: T, b: T) => number;
  codec: RecordCodec<T>;
  /** Records held in memory before a run is written. */
  maxRecords?: number;
  /** Encoded bytes held in memory before a run is written (by the codec's `maxSize` when it has one). */
  maxBytes?: number;
}

const DEFAULT_MAX_RECORDS = 100_000;
const DEFAULT_MAX_BYTES = 16 << 20;
/**
 * After writing a run, the sort collects garbage when the heap in use has grown by this much since
 * the sort began (or since its last collection): about one run of records. At 10^6 rows (bench/
 * plan.ts, `reverify report`) 24 MiB kept the plan at 223 MiB and the report at 241–260 MiB
 * (328–347 and 284–287 without) for no CPU that the runs could tell apart; after every run, the plan
 * was 203 MiB but the report took 12 % more CPU; 48 MiB left the plan at 251–266 MiB.
 */
const COLLECT_MARGIN_BYTES = 24 << 20;
/**
 * Runs merged at once (one open file each, their read buffers sharing one budget: sort-run-files.ts
 * `MERGE_READ_BYTES`); more runs merge in levels, each level another pass over its records. At 64,
 * the plan of 10^7 rows (200 runs) merged 192 of its runs twice.
 */
const MAX_FAN_IN = 256;
/** Records per array that `sortedChunks` yields. */
const MERGE_CHUNK = 4096;

/**
 * Sorts records added one at a time, in bounded memory. Stable: records that compare equal come
 * out in the order they were added. Call `sorted()` once, after the last `add`.
 */
export class ExternalSorter<T> {
  private memory: T[] = [];
  private memoryBytes = 0;
  private readonly runs: string[] = [];
  private nextRun = 0;
  private readonly maxRecords: number;
  private readonly maxBytes: number;
  count = 0;
  /** The heap in use when the sort began, then after its last collection. */
  private heapFloor = getHeapStatistics().used_heap_size;

  constructor(private readonly opts: SorterOptions<T>) {
    this.maxRecords = opts.maxRecords ?? DEFAULT_MAX_RECORDS;
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  /** Adds a record; returns a promise only when memory was full and is being written (await it). */
  add(t: T): Promise<void> | undefined {
    this.memory.push(t);
    const codec = this.opts.codec;
    this.memoryBytes += (codec.maxSize ? codec.maxSize(t) : codec.size(t)) + FRAME_HEADER;
    this.count++;
    if (this.memory.length >= this.maxRecords || this.memoryBytes >= this.maxBytes) return this.spill();
    return undefined;
  }

  /** Sorts what memory holds and writes it as a run file. */
  private async spill(): Promise<void> {
    const path = `${this.opts.dir}/${this.opts.name}.run${this.nextRun++}`;
    this.runs.push(path);
    await writeRun(path, this.opts.codec, [this.memory.sort(this.opts.compare)]);
    this.memory = [];
    this.memoryBytes = 0;
    // The run's records waited long enough to be promoted to V8's old generation, where V8 would
    // let 100+ MB of them pile up between its own full collections (heaps of 200–240 MB in the
    // plan, the final coverage count and the report at 10^6 rows: the largest of a run); collected
    // now, a big sort's heap stays near what it holds.
    this.collectIfGrown();
  }

  /** A full collection once the heap in use has grown by COLLECT_MARGIN_BYTES since the last one (or the sort's start). */
  private collectIfGrown(): void {
    if (getHeapStatistics().used_heap_size < this.heapFloor + COLLECT_MARGIN_BYTES) return;
    collectGarbage();
    this.heapFloor = getHeapStatistics().used_heap_size;
  }

  /** The records in order; run files are removed when the iteration ends. */
  async *sorted(): AsyncGenerator<T> {
    for await (const chunk of this.sortedChunks()) yield* chunk;
  }

  /**
   * The records in order, in arrays of a few thousand (an `await` per array, not per record: for
   * hot loops); run files are removed when the iteration ends.
   */
  async *sortedChunks(): AsyncGenerator<T[]> {
    if (this.runs.length === 0) {
      const all = this.memory.sort(this.opts.compare);
      this.memory = [];
      for (let i = 0; i < all.length; i += MERGE_CHUNK) yield all.slice(i, i + MERGE_CHUNK);
      return;
    }
    try {
      if (this.memory.length > 0) await this.spill();
      // Merge at most MAX_FAN_IN runs at once (open files); earlier runs first, so ties stay stable.
      while (this.runs.length > MAX_FAN_IN) {
        const group = this.runs.slice(0, MAX_FAN_IN);
        const path = `${this.opts.dir}/${this.opts.name}.run${this.nextRun++}`;
        await writeRun(path, this.opts.codec, this.merge(group));
        this.runs.splice(0, MAX_FAN_IN, path);
        await Promise.all(group.map((p) => rm(p, { force: true })));
      }
      yield* this.merge(this.runs);
    } finally {
      await this.dispose();
    }
  }

  /** Merges sorted run files (ties go to the earlier file), in arrays of up to `MERGE_CHUNK` records. */
  private merge(paths: readonly string[]): AsyncGenerator<T[]> {
    // The records decoded ahead for each run live long enough to be promoted too: `reverify
    // report` at 10^6 rows went from 91 to 186 MiB of heap within its merge, one run in two.
    return mergeRuns(paths, this.opts.codec, this.opts.compare, MERGE_CHUNK, () => this.collectIfGrown());
  }

  /** Removes the run files (also done when `sorted()` finishes). */
  async dispose(): Promise<void> {
    this.memory = [];
    await Promise.all(this.runs.splice(0).map((p) => rm(p, { force: true })));
  }
}

/**
 * Consecutive records with the same group id, as arrays: over a sorted stream, every group of
 * equal ids. A group is held in memory whole (a key's few records).
 */
export async function* groupsOf<T>(sorted: AsyncIterable<T>, id: (t: T) => string): AsyncGenerator<T[]> {
  let group: T[] = [];
  let current = '';
  for await (const t of sorted) {
    const k = id(t);
    if (group.length > 0 && k !== current) {
      yield group;
      group = [];
    }
    current = k;
    group.push(t);
  }
  if (group.length > 0) yield group;
}

/**
 * `groupsOf` over `sortedChunks()`, calling `each` on every group as it completes (no `await` per
 * group or record: for hot loops).
 */
export async function forEachGroup<T>(sorted: AsyncIterable<T[]>, id: (t: T) => string, each: (group: T[]) => void): Promise<void> {
  let group: T[] = [];
  let current = '';
  for await (const chunk of sorted) {
    for (const t of chunk) {
      const k = id(t);
      if (group.length > 0 && k !== current) {
        each(group);
        group = [];
      }
      current = k;
      group.push(t);
    }
  }
  if (group.length > 0) each(group);
}
