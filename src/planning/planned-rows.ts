/**
 * Reading plan rows by plan offset, each proven to be the planned bytes: by a batch (its rows, a
 * window at a time) and by `reverify status` and the run report (the keys of unsettled re-judgments,
 * src/cli/unresolved-rejudgments.ts).
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { FileIdentity } from '../contract/run-spec.js';
import type { VerifyBatchRequest } from '../contract/verify-batch-request.js';
import { ChangedRangeError, readRangesBytes, readRangesFrom, type ByteRange } from '../io/read-ranges.js';
import { sameStamp, stampOf, type FileStamp } from '../contract/file-stamp.js';
import { fileNow } from '../io/file-identity.js';
import { plannedFileChanged, plannedRowChanged } from './changed-input.js';
import { readPlanRange, type PlanRecord } from './plan-file.js';

/** The rows read: the k-th requested row's source and input texts, decoded when asked for. */
export interface PlannedRows {
  source(k: number): string;
  input(k: number): string;
}

/**
 * The source and input files of a batch, each opened once (when first read) and kept open until
 * `close()`: a batch reads its rows a window at a time, and opening, checking and closing both files
 * for every window cost a dozen waits on the thread pool, the first of them before its first request.
 * A file is proven when it is opened: its stamp (`FileStamp`: size, times to the nanosecond, inode)
 * must be the one the plan recorded (`plan.files`), so a file written to since the plan — between
 * an interruption and the run's next batch, even with the same bytes — stops the run
 * (`InputChangedError`) before the batch reads a row of it, let alone sends one. Not the run's own
 * sidecar (`ownSidecar`): `--judge-failed-only --append` into the run's own rollouts plans from the
 * sidecar its commits append to (appends move no planned row; each row's digest still proves it).
 */
export class PlannedFiles {
  private readonly handles = new Map<string, Promise<FileHandle>>();

  constructor(
    private readonly plan: VerifyBatchRequest['plan'],
    private readonly ownSidecar?: string,
  ) {}

  /** Reads `ranges` of `path` through its handle (opened and proven now if it is not yet). */
  async read(path: string, ranges: ByteRange[]): Promise<Buffer[]> {
    let fh = this.handles.get(path);
    if (fh === undefined) {
      fh = this.openProven(path);
      fh.catch(() => undefined); // awaited below; close() skips a file that did not open
      this.handles.set(path, fh);
    }
    return readRangesFrom(await fh, path, ranges);
  }

  private async openProven(path: string): Promise<FileHandle> {
    const fh = await open(path, 'r');
    const planned = this.plan.files?.find((f) => f.path === path);
    if (planned === undefined) return fh;
    const now = stampOf(await fh.stat({ bigint: true }));
    if (sameStamp(planned, now) || (await this.isOwnSidecar(now))) return fh;
    await fh.close();
    throw plannedFileChanged(this.plan, planned, now);
  }

  private async isOwnSidecar(now: FileStamp): Promise<boolean> {
    if (this.ownSidecar === undefined) return false;
    const own = await fileNow(this.ownSidecar);
    return own !== null && own.ino === now.ino && own.dev === now.dev;
  }

  async close(): Promise<void> {
    const opened = [...this.handles.values()];
    this.handles.clear();
    await Promise.all(opened.map((fh) => fh.then((h) => h.close()).catch(() => undefined)));
  }
}

/**
 * The source and input rows of plan records `rows`, each proven to be the bytes the plan read
 * (its digest): a file changed since planning stops the run (`InputChangedError`) before
 * anything is sent or written. Kept as bytes (outside V8's heap) until a row is used: a batch holds
 * its rows for its whole life, and as strings they would be copied into the old generation. Both
 * files are read at once; through `files` when given (held open by the caller), else each opened
 * and closed here. When both have changed, the source is the one named.
 */
export async function readPlannedRows(
  req: Pick<VerifyBatchRequest, 'plan' | 'inputsPath'>,
  records: PlanRecord[],
  rows: number[],
  files?: PlannedFiles,
): Promise<PlannedRows> {
  const read = async (path: string, where: (rec: PlanRecord) => string, range: (rec: PlanRecord) => ByteRange) => {
    const ranges = rows.map((i) => range(records[i]));
    try {
      return await (files ? files.read(path, ranges) : readRangesBytes(path, ranges));
    } catch (err) {
      if (!(err instanceof ChangedRangeError)) throw err;
      throw await plannedRowChanged(req.plan, path, where(records[rows[err.index]]));
    }
  };
  const [sources, inputs] = await Promise.allSettled([
    read(
      req.plan.sourcePath,
      (rec) => `line ${rec.sourceLine}`,
      (rec) => ({ offset: rec.sourceOffset, length: rec.sourceLength, digest: rec.sourceDigest }),
    ),
    read(
      req.inputsPath,
      (rec) => `the materialized input of ${req.plan.sourcePath}:${rec.sourceLine}`,
      (rec) => ({ offset: rec.inputOffset, length: rec.inputLength, digest: rec.inputDigest }),
    ),
  ]);
  if (sources.status === 'rejected') throw sources.reason;
  if (inputs.status === 'rejected') throw inputs.reason;
  const src = sources.value;
  const inp = inputs.value;
  return {
    source: (k) => src[k].toString('utf8'),
    input: (k) => inp[k].toString('utf8'),
  };
}

/**
 * Plan records read at once with their source rows (`plannedSourceChunks`): ≈ 2 MiB of rows of
 * ≈ 900 bytes. 8,192 (≈ 7 MiB windows, held on each of the count's two threads) took the command to
 * 290–308 MiB during the count at 10^7 rows; 2,048 to 244–253, at the same speed (bench/README.md).
 */
const SOURCE_CHUNK = 2048;

/**
 * Plan records `[from, to)` with their source rows' bytes, a chunk of records at a time (their rows
 * in a few large reads: `readRangesBytes`), for the passes over every planned row: the count of the
 * live estimate's units, a run's unstarted rollouts. A read per row made those passes take minutes
 * at 10^7 rows. `proven`: each row's digest is checked, and a row changed since the plan stops the
 * run with its line (`InputChangedError`).
 */
export async function* plannedSourceChunks(
  plan: { planPath: string; recordBytes?: number; sourcePath: string; files?: FileIdentity[]; inputFormat?: 'atif' },
  from: number,
  to: number,
  proven: boolean,
): AsyncGenerator<{ from: number; records: PlanRecord[]; lines: Buffer[] }> {
  for (let at = from; at < to; at += SOURCE_CHUNK) {
    const records = await readPlanRange(plan.planPath, at, Math.min(to, at + SOURCE_CHUNK), plan.recordBytes);
    const ranges = records.map((r) => ({ offset: r.sourceOffset, length: r.sourceLength, ...(proven ? { digest: r.sourceDigest } : {}) }));
    let lines: Buffer[];
    try {
      lines = await readRangesBytes(plan.sourcePath, ranges);
    } catch (err) {
      if (!(err instanceof ChangedRangeError) || !proven) throw err;
      throw await plannedRowChanged(plan, plan.sourcePath, `line ${records[err.index].sourceLine}`);
    }
    yield { from: at, records, lines };
  }
}
