/**
 * A plan's attempts file, beside its plan file: for each plan row (the index of its record), how
 * many failed attempts its key had in the run's sidecar when the plan was made, and whether one of
 * them stops the key (terminal, as the retry rules say). The run's first plan learns them in its
 * key join (plan-keys.ts); each re-judgment plan (activities/plan-round.ts) carries them on, adding
 * what the attempt its batch committed left in the sidecar, so that no round reads the sidecar.
 *
 * A row's word is 32 bits: bit 31 terminal, bits 0–30 the count, saturating. A byte would do for
 * the default cap, but the cap is only validated as an integer >= 1 and `--extend-attempts` adds to
 * it, so a 7-bit count could not tell 127 attempts from 300 under a cap of 200.
 */
import type { FileHandle } from 'node:fs/promises';
import { readRangeBytes } from '../io/read-range.js';
import { RecordFileWriter } from '../io/record-file-writer.js';

/** Bytes per row. */
export const ATTEMPTS_BYTES = 4;
const TERMINAL_BIT = 2 ** 31;
const MAX_COUNT = TERMINAL_BIT - 1;

/** A row's failed attempts in the sidecar, and whether one of them stops its key. */
export interface RowAttempts {
  count: number;
  terminal: boolean;
}

/** A row whose key has no failed attempt. */
export const NO_ATTEMPTS: RowAttempts = { count: 0, terminal: false };

/**
 * What an attempt of a row, once committed, left in the sidecar: its failure row, a failure row
 * that stops its key, or nothing (a re-judgment answered without a grade is withdrawn).
 */
export type SidecarLeft = 'row' | 'terminal' | 'none';

export function attemptsWord(a: RowAttempts): number {
  return Math.min(a.count, MAX_COUNT) + (a.terminal ? TERMINAL_BIT : 0);
}

export function attemptsOfWord(word: number): RowAttempts {
  return { count: word % TERMINAL_BIT, terminal: word >= TERMINAL_BIT };
}

/** A row's attempts once an attempt that left `left` in the sidecar is committed. */
export function attemptsAfter(before: RowAttempts, left: SidecarLeft): RowAttempts {
  if (left === 'none') return before;
  return { count: before.count + 1, terminal: before.terminal || left === 'terminal' };
}

/** The attempts file of the plan file `planPath` (`plan.bin` → `plan.attempts.bin`). */
export function attemptsPathOf(planPath: string): string {
  return `${planPath.replace(/\.bin$/, '')}.attempts.bin`;
}

const putWord = (word: number, buf: Buffer, at: number): void => {
  buf.writeUInt32LE(word, at);
};

/** Appends rows' words to an attempts file through a buffer (written with the plan, row for row). */
export class AttemptsWriter {
  private constructor(private readonly out: RecordFileWriter) {}

  static async create(path: string): Promise<AttemptsWriter> {
    return new AttemptsWriter(await RecordFileWriter.create(path, ATTEMPTS_BYTES, 16_384));
  }

  /** Rows written. */
  get count(): number {
    return this.out.count;
  }

  /** Appends one row's word (`attemptsWord`); returns a promise only when the buffer was written out (await it). */
  add(word: number): Promise<void> | undefined {
    return this.out.add(word, putWord);
  }

  /** Flushes, fsyncs and closes. */
  close(): Promise<void> {
    return this.out.close();
  }
}

/** The words of rows [from, to) of the open attempts file `fh`, in one read. */
export async function readAttemptWords(fh: FileHandle, from: number, to: number): Promise<number[]> {
  const bytes = await readRangeBytes(fh, from * ATTEMPTS_BYTES, (to - from) * ATTEMPTS_BYTES);
  const words = new Array<number>(to - from);
  for (let i = 0; i < words.length; i++) words[i] = bytes.readUInt32LE(i * ATTEMPTS_BYTES);
  return words;
}
