/**
 * The merge of the external sort (external-sort.ts): sorted run files read back together through a
 * min-heap of readers, one buffered reader per run, ties going to the earlier run (a stable merge).
 */
import { FrameReader, readBufferBytes, type RecordCodec } from './sort-run-files.js';

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
 * Merges sorted run files (ties go to the earlier file), in arrays of up to `chunk` records;
 * `afterChunk` runs after each full array is taken.
 */
export async function* mergeRuns<T>(
  paths: readonly string[],
  codec: RecordCodec<T>,
  compare: (a: T, b: T) => number,
  chunk: number,
  afterChunk: () => void,
): AsyncGenerator<T[]> {
  const heap = new ReaderHeap<T>(compare);
  const readers: FrameReader<T>[] = [];
  // One read budget for the merge, however many runs it has (sort-run-files.ts).
  const bufferBytes = readBufferBytes(paths.length);
  try {
    for (const [i, path] of paths.entries()) {
      const r = await FrameReader.open(path, codec, bufferBytes);
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
      if (out.length === chunk) {
        yield out;
        out = [];
        afterChunk();
      }
    }
    if (out.length > 0) yield out;
  } finally {
    await Promise.all(readers.map((r) => r.close()));
  }
}
