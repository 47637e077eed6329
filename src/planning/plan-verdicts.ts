import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { ATTEMPTS_BYTES } from './plan-attempts.js';
import { encodePlanRecord, PLAN_RECORD_BYTES, type PlanRecord } from './plan-file.js';

/** What the plan phase decided about one source row. */
export enum Verdict {
  /** Not yielded (recovery: not a judge failure, already present, or a later copy); also never written. */
  NotYielded = 0,
  /** Verify it: the record holds its plan record. */
  Plan = 1,
  /** Bad input: the run stops here if the row is within the limit. */
  Error = 2,
  /** A repeat of an earlier source row's key (the first is verified). */
  Duplicate = 3,
  /** `--resume` skips it: the output holds the key. */
  SkipDone = 4,
  /** `--resume` skips it: the sidecar holds a terminal failure. */
  SkipTerminal = 5,
  /** `--resume` skips it: the sidecar holds `max_attempts` failed attempts. */
  SkipMaxed = 6,
}

/**
 * A verdict's record: the verdict byte, its plan record and its attempts word (plan-attempts.ts),
 * adjacent so that an ordering sort carries both as one run of words, and its task's rank (`--order random`, f64).
 */
const RECORD_BYTES = 1 + PLAN_RECORD_BYTES + ATTEMPTS_BYTES + 8;
const RANK_AT = 1 + PLAN_RECORD_BYTES + ATTEMPTS_BYTES;
const NO_PLAN: PlanRecord = {
  sourceOffset: 0,
  sourceLength: 0,
  sourceLine: 0,
  inputOffset: 0,
  inputLength: 0,
  agent: 0,
  server: 0,
  sourceDigest: 0n,
  inputDigest: 0n,
};

/** One row's verdict as `VerdictFile.inOrder` reads it: its record in the bucket's window. */
export class VerdictCursor {
  ordinal = 0;
  verdict: Verdict = Verdict.NotYielded;
  /** Where the row's record starts in `window` (its verdict byte). */
  at = 0;

  constructor(private readonly window: Buffer) {}

  /**
   * A `Plan` verdict's plan record as `encodePlanRecord` wrote it: `PLAN_RECORD_BYTES` of the
   * returned buffer from `planAt`, then its attempts word (`ATTEMPTS_BYTES`).
   */
  get planBytes(): Buffer {
    return this.window;
  }

  get planAt(): number {
    return this.at + 1;
  }

  /** A `Plan` verdict's attempts word (plan-attempts.ts `attemptsWord`); 0 for others. */
  attemptsWord(): number {
    return this.verdict === Verdict.Plan ? this.window.readUInt32LE(this.at + 1 + PLAN_RECORD_BYTES) : 0;
  }

  /** A `Plan` verdict's rank in the plan's order (`--order random`); 0 for others. */
  rank(): number {
    return this.verdict === Verdict.Plan ? this.window.readDoubleLE(this.at + RANK_AT) : 0;
  }
}

/** Ordinals per bucket file (the read-back window: 32,768 × 61 bytes ≈ 1.9 MiB). */
const BUCKET_ORDINALS = 1 << 15;
/** Records buffered per bucket before they are appended to its file (≈ 10 KiB a bucket). */
const BUCKET_BUFFER_RECORDS = 256;
/** A buffered record: the ordinal (u32), then the verdict byte, its plan record, attempts word and rank. */
const ENTRY_BYTES = 4 + RECORD_BYTES;

/**
 * One record per source row: the verdict and, for `Plan`, its plan record and attempts. The key join decides
 * rows in key order (random file order) and the final pass reads them back in file order. Records
 * are distributed by ordinal into buckets of 32,768 ordinals, each an append-only file written
 * through a small buffer (a write per 256 records, not one per record); reading a bucket back
 * places its records by ordinal in a window, where unwritten places read as `NotYielded`.
 * Memory: a 10 KiB buffer per bucket (31 buckets at 10^6 rows) plus one window.
 */
export class VerdictFile {
  private readonly buffers = new Map<number, { buf: Buffer; used: number }>();

  /** `path`: the prefix of the bucket files (`<path>.<bucket>`). */
  constructor(readonly path: string) {}

  private bucketPath(bucket: number): string {
    return `${this.path}.${bucket}`;
  }

  /** `attempts`: a `Plan` verdict's attempts word (plan-attempts.ts `attemptsWord`). */
  set(ordinal: number, verdict: Verdict, plan: PlanRecord = NO_PLAN, rank = 0, attempts = 0): void {
    const bucket = Math.floor(ordinal / BUCKET_ORDINALS);
    let b = this.buffers.get(bucket);
    if (b === undefined) {
      b = { buf: Buffer.allocUnsafe(BUCKET_BUFFER_RECORDS * ENTRY_BYTES), used: 0 };
      this.buffers.set(bucket, b);
    }
    b.buf.writeUInt32LE(ordinal - bucket * BUCKET_ORDINALS, b.used);
    b.buf[b.used + 4] = verdict;
    encodePlanRecord(plan, b.buf, b.used + 5);
    b.buf.writeUInt32LE(attempts, b.used + 5 + PLAN_RECORD_BYTES);
    b.buf.writeDoubleLE(rank, b.used + 4 + RANK_AT);
    b.used += ENTRY_BYTES;
    if (b.used === b.buf.length) this.flush(bucket, b);
  }

  private flush(bucket: number, b: { buf: Buffer; used: number }): void {
    if (b.used === 0) return;
    const fd = openSync(this.bucketPath(bucket), 'a');
    try {
      let done = 0;
      while (done < b.used) done += writeSync(fd, b.buf, done, b.used - done);
    } finally {
      closeSync(fd);
    }
    b.used = 0;
  }

  /**
   * The verdicts of ordinals `[0, count)` in order, a bucket at a time, through one cursor (read it
   * before the next step): no object per row.
   */
  *inOrder(count: number): Generator<VerdictCursor> {
    for (const [bucket, b] of this.buffers) this.flush(bucket, b);
    const window = Buffer.allocUnsafe(BUCKET_ORDINALS * RECORD_BYTES);
    const cursor = new VerdictCursor(window);
    for (let base = 0, bucket = 0; base < count; base += BUCKET_ORDINALS, bucket++) {
      const n = Math.min(BUCKET_ORDINALS, count - base);
      window.fill(0, 0, n * RECORD_BYTES);
      if (this.buffers.has(bucket)) {
        // Entries in the order they were set: a later one for the same ordinal wins.
        const entries = readFileSync(this.bucketPath(bucket));
        for (let at = 0; at + ENTRY_BYTES <= entries.length; at += ENTRY_BYTES) {
          entries.copy(window, entries.readUInt32LE(at) * RECORD_BYTES, at + 4, at + ENTRY_BYTES);
        }
      }
      for (let i = 0; i < n; i++) {
        cursor.ordinal = base + i;
        cursor.at = i * RECORD_BYTES;
        cursor.verdict = window[cursor.at];
        yield cursor;
      }
    }
  }

  /** Removes the bucket files. */
  dispose(): void {
    for (const bucket of this.buffers.keys()) rmSync(this.bucketPath(bucket), { force: true });
    this.buffers.clear();
  }
}
