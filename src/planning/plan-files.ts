/**
 * A plan's two files, written together row for row: the plan records (plan-file.ts) and their
 * attempts (plan-attempts.ts). Each is written under a temporary name and renamed into place once
 * whole, so a retried plan activity finds neither half-written.
 */
import { rename } from 'node:fs/promises';
import { AttemptsWriter, attemptsPathOf, attemptsWord, type RowAttempts } from './plan-attempts.js';
import { PLAN_RECORD_BYTES, PlanWriter, type PlanRecord } from './plan-file.js';

/** Where a plan's two files are. */
export interface PlanPaths {
  plan: string;
  attempts: string;
}

/** The files of the plan `planPath` (`plan.bin`, `plan.attempts.bin`). */
export function planPathsOf(planPath: string): PlanPaths {
  return { plan: planPath, attempts: attemptsPathOf(planPath) };
}

/** The temporary names the files are written under. */
export function tmpPlanPaths(p: PlanPaths): PlanPaths {
  return { plan: `${p.plan}.tmp`, attempts: `${p.attempts}.tmp` };
}

/** Renames the files written under their temporary names into place. */
export async function publishPlanFiles(p: PlanPaths): Promise<void> {
  const tmp = tmpPlanPaths(p);
  await rename(tmp.attempts, p.attempts);
  await rename(tmp.plan, p.plan);
}

/** Appends rows to a plan file and its attempts file. */
export class PlanFilesWriter {
  private constructor(
    private readonly plan: PlanWriter,
    private readonly attempts: AttemptsWriter,
  ) {}

  /** Writers of `paths`, with plan records of `recordBytes` bytes. */
  static async create(paths: PlanPaths, recordBytes = PLAN_RECORD_BYTES): Promise<PlanFilesWriter> {
    const plan = await PlanWriter.create(paths.plan, recordBytes);
    try {
      return new PlanFilesWriter(plan, await AttemptsWriter.create(paths.attempts));
    } catch (err) {
      await plan.close();
      throw err;
    }
  }

  /** Rows written. */
  get count(): number {
    return this.plan.count;
  }

  async add(rec: PlanRecord, attempts: RowAttempts): Promise<void> {
    await this.plan.add(rec);
    await this.attempts.add(attemptsWord(attempts));
  }

  /**
   * Appends the record `encodePlanRecord` wrote at `buf[at]` (of the plan's record size) with its
   * attempts word; returns a promise only when a buffer was written out (await it).
   */
  addEncoded(buf: Buffer, at: number, word: number): Promise<void> | undefined {
    const plan = this.plan.addEncoded(buf, at);
    const attempts = this.attempts.add(word);
    return plan || attempts ? Promise.all([plan, attempts]).then(() => undefined) : undefined;
  }

  /** Flushes, fsyncs and closes both files. */
  async close(): Promise<void> {
    try {
      await this.plan.close();
    } finally {
      await this.attempts.close();
    }
  }
}
