import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { decodePlanRecord, encodePlanRecord, PLAN_RECORD_BYTES, type PlanRecord } from './plan-file.js';

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

const RECORD_BYTES = 1 + PLAN_RECORD_BYTES;
const READ_RECORDS = 32_768;
const NO_PLAN: PlanRecord = {
  sourceOffset: 0,
  sourceLength: 0,
  sourceLine: 0,
  inputOffset: 0,
  inputLength: 0,
  agent: 0,
  server: 0,
  sourceSum: 0,
  inputSum: 0,
};

/**
 * One fixed record per source row, at the row's ordinal: the verdict and, for `Plan`, its plan
 * record. The key join decides rows in key order and writes each at its place; the final pass reads
 * them back in file order. Unwritten places read as `NotYielded` (the file is sparse there).
 * Synchronous positioned I/O: a few µs per record from the page cache.
 */
export class VerdictFile {
  private readonly fd: number;
  private readonly one = Buffer.alloc(RECORD_BYTES);

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w+');
  }

  set(ordinal: number, verdict: Verdict, plan: PlanRecord = NO_PLAN): void {
    this.one[0] = verdict;
    encodePlanRecord(plan, this.one, 1);
    writeSync(this.fd, this.one, 0, RECORD_BYTES, ordinal * RECORD_BYTES);
  }

  /** The verdicts of ordinals `[0, count)` in order, a block at a time. */
  *inOrder(count: number): Generator<{ ordinal: number; verdict: Verdict; plan: PlanRecord }> {
    const buf = Buffer.allocUnsafe(READ_RECORDS * RECORD_BYTES);
    for (let first = 0; first < count; first += READ_RECORDS) {
      const n = Math.min(READ_RECORDS, count - first);
      buf.fill(0, 0, n * RECORD_BYTES);
      readSync(this.fd, buf, 0, n * RECORD_BYTES, first * RECORD_BYTES);
      for (let i = 0; i < n; i++) {
        const at = i * RECORD_BYTES;
        const verdict = buf[at] as Verdict;
        yield { ordinal: first + i, verdict, plan: verdict === Verdict.Plan ? decodePlanRecord(buf, at + 1) : NO_PLAN };
      }
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}
