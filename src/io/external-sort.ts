/**
 * Sorting more records than memory should hold: records are kept in memory up to a budget, sorted
 * and written to a run file whenever the budget fills, and the runs are merged back in one
 * streaming pass (a heap over one buffered reader per run). Memory is the budget plus one read
 * buffer per run, whatever the number of records; a sort that fits the budget never touches disk.
 * The plan, seeding, re-judgment and aggregation phases use it to join rows by key in flat memory.
 * (Over 300 lines on purpose: the run writer, the buffered run reader, the heap and the multi-level
 * merge are one algorithm whose invariants are easiest to check side by side.)
 */
import { open, rm, type FileHandle } from 'node:fs/promises';
import { getHeapStatistics } from 'node:v8';
import { collectGarbage } from './collect-garbage.js';
import { writeFully } from './write-fully.js';

/** How a record is written to and read from a run file. */
export interface RecordCodec<T> {
  /** Bytes `write` will use for `t`. */
  size(t: T): number;
  write(t: T, buf: Buffer, at: number): void;
  /** Reads the record in `buf[at, at + length)`. */
  read(buf: Buffer, at: number, length: number): T;
}

export interface SorterOptions<T> {
  /** Where run files go (a work directory the caller removes, or `dispose()` cleans). */
  dir: string;
  /** Run files are `<dir>/<name>.run<N>`. */
  name: string;
  compare: (a: T, b: T) => number;
  codec: RecordCodec<T>;
  /** Records held in memory before a run is written. */
  maxRecords?: number;
  /** Encoded bytes held in memory before a run is written. */
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
const IO_BUFFER_BYTES = 1 << 20;
/** Runs merged at once (one open file and one I/O buffer each); more runs merge in levels. */
const MAX_FAN_IN = 64;
/** Records per array that `sortedChunks` yields. */
const MERGE_CHUNK = 4096;
/** Each record on disk: its length (u32), then its bytes. */
const FRAME_HEADER = 4;

/** Writes frames to a file through a buffer. */
class FrameWriter<T> {
  private buf = Buffer.allocUnsafe(IO_BUFFER_BYTES);
  private used = 0;

  constructor(
    private readonly fh: FileHandle,
    private readonly path: string,
    private readonly codec: RecordCodec<T>,
  ) {}

  /** Buffers `t`; returns a promise only when the buffer had to be written first (await it). */
  add(t: T): Promise<void> | undefined {
    const n = this.codec.size(t);
    if (this.used + FRAME_HEADER + n > this.buf.length) return this.flushThenAdd(t, n);
    this.put(t, n);
    return undefined;
  }

  private async flushThenAdd(t: T, n: number): Promise<void> {
    await this.flush();
    if (FRAME_HEADER + n > this.buf.length) this.buf = Buffer.allocUnsafe(FRAME_HEADER + n);
    this.put(t, n);
  }

  private put(t: T, n: number): void {
    this.buf.writeUInt32LE(n, this.used);
    this.codec.write(t, this.buf, this.used + FRAME_HEADER);
    this.used += FRAME_HEADER + n;
  }

  async flush(): Promise<void> {
    await writeFully(this.fh, this.buf.subarray(0, this.used), null, this.path);
    this.used = 0;
  }
}

/** Reads frames of a run file in order, a buffer at a time. */
class FrameReader<T> {
  private buf = Buffer.allocUnsafe(IO_BUFFER_BYTES);
  private start = 0;
  private end = 0;
  private position = 0;
  head: T | undefined;

  private constructor(
    private readonly fh: FileHandle,
    private readonly codec: RecordCodec<T>,
  ) {}

  static async open<T>(path: string, codec: RecordCodec<T>): Promise<FrameReader<T>> {
    const r = new FrameReader(await open(path, 'r'), codec);
    await r.advance();
    return r;
  }

  /**
   * Moves `head` to the next record (`undefined` at the end). Without I/O when the next record is
   * in the buffer (returns undefined), else returns the promise of the read (await it).
   */
  advance(): Promise<void> | undefined {
    if (!this.hasFrame()) return this.advanceSlow();
    this.take();
    return undefined;
  }

  private take(): void {
    const n = this.buf.readUInt32LE(this.start);
    this.head = this.codec.read(this.buf, this.start + FRAME_HEADER, n);
    this.start += FRAME_HEADER + n;
  }

  private async advanceSlow(): Promise<void> {
    while (!this.hasFrame()) {
      if (!(await this.fill())) {
        if (this.end === this.start) {
          this.head = undefined;
          return;
        }
        throw new Error('run file ends mid-record (it was changed or cut while being read)');
      }
    }
    this.take();
  }

  private hasFrame(): boolean {
    return this.has(FRAME_HEADER) && this.has(FRAME_HEADER + this.buf.readUInt32LE(this.start));
  }

  private has(n: number): boolean {
    return this.end - this.start >= n;
  }

  /**
   * Moves the unread bytes to the front and reads more, growing the buffer for a record larger
   * than it. Returns false at the end of the file.
   */
  private async fill(): Promise<boolean> {
    const left = this.end - this.start;
    const need = left >= FRAME_HEADER ? FRAME_HEADER + this.buf.readUInt32LE(this.start) : 0;
    const next = need > this.buf.length ? Buffer.allocUnsafe(need) : this.buf;
    this.buf.copy(next, 0, this.start, this.end);
    this.buf = next;
    this.start = 0;
    this.end = left;
    let read = 0;
    while (this.end < this.buf.length) {
      const { bytesRead } = await this.fh.read(this.buf, this.end, this.buf.length - this.end, this.position);
      if (bytesRead === 0) break;
      this.end += bytesRead;
      this.position += bytesRead;
      read += bytesRead;
    }
    return read > 0;
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

/** A min-heap of run readers ordered by their head record. */
class ReaderHeap<T> {
  private readonly items: FrameReader<T>[] = [];
  /** Each reader's run number, for ties. */
  readonly rank = new Map<FrameReader<T>, number>();

  constructor(private readonly compare: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  top(): FrameReader<T> {
    return this.items[0];
  }

  push(r: FrameReader<T>): void {
    const a = this.items;
    a.push(r);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.less(a[p], a[i])) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }

  /** Restores the heap after the top's head changed; removes the top if it is exhausted. */
  fixTop(): void {
    const a = this.items;
    if (a[0].head === undefined) {
      const last = a.pop()!;
      if (a.length === 0) return;
      a[0] = last;
    }
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.less(a[l], a[m])) m = l;
      if (r < a.length && this.less(a[r], a[m])) m = r;
      if (m === i) break;
      [a[m], a[i]] = [a[i], a[m]];
      i = m;
    }
  }

  /** Ties go to the earlier run, so the merge is stable. */
  private less(x: FrameReader<T>, y: FrameReader<T>): boolean {
    const c = this.compare(x.head!, y.head!);
    return c < 0 || (c === 0 && this.rank.get(x)! < this.rank.get(y)!);
  }
}

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
    this.memoryBytes += this.opts.codec.size(t) + FRAME_HEADER;
    this.count++;
    if (this.memory.length >= this.maxRecords || this.memoryBytes >= this.maxBytes) return this.spill();
    return undefined;
  }

  /** Sorts what memory holds and writes it as a run file. */
  private async spill(): Promise<void> {
    const path = `${this.opts.dir}/${this.opts.name}.run${this.nextRun++}`;
    this.runs.push(path);
    const fh = await open(path, 'w');
    try {
      const w = new FrameWriter(fh, path, this.opts.codec);
      for (const t of this.memory.sort(this.opts.compare)) {
        const writing = w.add(t);
        if (writing) await writing;
      }
      await w.flush();
    } finally {
      await fh.close();
    }
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
        const fh = await open(path, 'w');
        try {
          const w = new FrameWriter(fh, path, this.opts.codec);
          for await (const chunk of this.merge(group)) {
            for (const t of chunk) {
              const writing = w.add(t);
              if (writing) await writing;
            }
          }
          await w.flush();
        } finally {
          await fh.close();
        }
        this.runs.splice(0, MAX_FAN_IN, path);
        await Promise.all(group.map((p) => rm(p, { force: true })));
      }
      yield* this.merge(this.runs);
    } finally {
      await this.dispose();
    }
  }

  /** Merges sorted run files (ties go to the earlier file), in arrays of up to `MERGE_CHUNK` records. */
  private async *merge(paths: readonly string[]): AsyncGenerator<T[]> {
    const heap = new ReaderHeap<T>(this.opts.compare);
    const readers: FrameReader<T>[] = [];
    try {
      for (const [i, path] of paths.entries()) {
        const r = await FrameReader.open(path, this.opts.codec);
        readers.push(r);
        heap.rank.set(r, i);
        if (r.head !== undefined) heap.push(r);
      }
      let out: T[] = [];
      while (heap.size > 0) {
        const r = heap.top();
        out.push(r.head!);
        const reading = r.advance();
        if (reading) await reading;
        heap.fixTop();
        if (out.length === MERGE_CHUNK) {
          yield out;
          out = [];
          // The records decoded ahead for each run live long enough to be promoted too: `reverify
          // report` at 10^6 rows went from 91 to 186 MiB of heap within its merge, one run in two.
          this.collectIfGrown();
        }
      }
      if (out.length > 0) yield out;
    } finally {
      await Promise.all(readers.map((r) => r.close()));
    }
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
