/**
 * Scanning a big JSONL file on more threads: the byte scanner's work on each line
 * (`isVouchedObject`: is it a JSON object, valid UTF-8, where are the wanted members) and the
 * digest of each line it vouches for are the bulk of a plan's CPU, and they depend on the bytes
 * alone. The caller still reads the whole file itself (`jsonlLineChunks`, the same reads); the
 * reads are dealt in turn to the caller (when it scans a share: `callerScans`) and to each thread,
 * which scans its own ahead of the caller; the caller takes their results and decides everything
 * as before (a line not vouched for takes the caller's full path). If a thread cannot start or
 * fails, or a read does not match (the file changed: the plan's identity check reports that),
 * `take` returns `null` and the caller scans that read (and, after a mismatch, the rest) itself.
 */
import { stat } from 'node:fs/promises';
import type { Worker } from 'node:worker_threads';
import { jsonlLineChunks, type LineChunk } from './jsonl-lines.js';
import { startThread } from './start-thread.js';

/** What the thread is asked for. */
export interface ScanAheadRequest {
  path: string;
  /** The top-level members whose value spans are wanted (`MemberNames`). */
  names: readonly string[];
  /** Digest the lines vouched for (`lineDigest`: the plan records them). */
  digests: boolean;
  /** Reads the thread may be in front of the caller. */
  ahead: number;
  /** The thread scans the reads whose index (from 0) is `lane` modulo `lanes`. */
  lane: number;
  lanes: number;
}

/** The thread's results for one read of the file. */
export interface ScannedRead {
  offset: number;
  count: number;
  /** 1 where the scanner vouched for line k. */
  vouched: Uint8Array;
  /** Line k's member spans at [k × 2 × names, …) (set where vouched). */
  slots: Int32Array;
  /** Line k's `lineDigest` as its halves (`lineDigestHalves`) at [2k, 2k + 1] (set where vouched, when asked for). */
  digests: Uint32Array;
}

/**
 * Files smaller than this are scanned by the caller alone. A thread gives its first results
 * 55–77 ms after it starts and adds 20–35 MiB while it runs, and on 2 cores it competes with
 * everything else: for a 107 MB file (20,000 rows of 5 KB) it made the plan, the coverage count and
 * the report slower, not faster (`bench/startup.ts`); for 1.2 GB (10^6 rows) it saves 2–3 s of
 * 13–14 (`bench/plan.ts`).
 */
export const SCAN_AHEAD_MIN_BYTES = 256 << 20;
const AHEAD = 4;

export interface ScanOptions {
  /** Digests too (`ScannedRead.digests`). */
  digests?: boolean;
  /** Files at least this big get the thread (default `SCAN_AHEAD_MIN_BYTES`; tests make it small). */
  minBytes?: number;
  /**
   * Threads that scan (default 1), and whether the caller scans a share of the reads itself
   * (default true): the reads are dealt in turn to the caller (first) and each thread.
   */
  threads?: number;
  callerScans?: boolean;
}

/**
 * The reads of `path` (`jsonlLineChunks`), each with the thread's scan of its lines for `names`
 * (or null: scan that read here); the thread is started for a big file and stopped when the loop
 * ends, however it ends.
 */
export async function* scannedReads(
  path: string,
  names: readonly string[],
  opts: ScanOptions = {},
): AsyncGenerator<{ chunk: LineChunk; read: ScannedRead | null }> {
  const size = await stat(path).then(
    (st) => st.size,
    () => 0,
  );
  const ahead = ScanAhead.start(path, names, size, opts);
  try {
    for await (const chunk of jsonlLineChunks(path)) yield { chunk, read: ahead ? await ahead.take(chunk) : null };
  } finally {
    ahead?.close();
  }
}

/** One scanning thread and the results it has posted, in order. */
class ScanLane {
  private readonly queue: ScannedRead[] = [];
  private waiting: (() => void) | null = null;
  private ended = false;
  private taken = 0;
  private worker: Worker | null;

  constructor(workerData: ScanAheadRequest) {
    try {
      this.worker = startThread(import.meta.url, 'scan-ahead-thread', { workerData, stdout: true, stderr: true });
    } catch {
      this.worker = null;
      this.ended = true;
      return;
    }
    this.worker.unref();
    this.worker.on('message', (m: ScannedRead | 'end' | 'failed') => {
      if (typeof m === 'string') this.end();
      else this.queue.push(m);
      this.wake();
    });
    this.worker.on('error', () => this.end());
    this.worker.on('exit', () => this.end());
  }

  /** The thread's next result, or undefined when it has no more (it ended or failed). */
  async next(): Promise<ScannedRead | undefined> {
    while (this.queue.length === 0 && !this.ended) await new Promise<void>((resolve) => (this.waiting = resolve));
    const read = this.queue.shift();
    if (read !== undefined) this.worker?.postMessage(++this.taken);
    return read;
  }

  /** Stops the thread (its results are no longer wanted). */
  close(): void {
    this.end();
    this.queue.length = 0;
    void this.worker?.terminate();
    this.worker = null;
  }

  /** No more results will come (those queued are still good). */
  private end(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }
}

export class ScanAhead {
  private readonly lanes: Array<ScanLane | null>;
  /** The caller's reads so far: read i is scanned by lane i modulo the lanes (null: the caller). */
  private reads = 0;

  private constructor(path: string, names: readonly string[], digests: boolean, threads: number, callerScans: boolean) {
    const caller = callerScans ? 1 : 0;
    const lanes = threads + caller;
    this.lanes = [];
    for (let lane = 0; lane < lanes; lane++) {
      this.lanes.push(lane < caller ? null : new ScanLane({ path, names, digests, ahead: AHEAD, lane, lanes }));
    }
  }

  /** A scan of `path` for `names` on other threads, or null when the file is small (or absent). */
  static start(path: string, names: readonly string[], size: number, opts: ScanOptions = {}): ScanAhead | null {
    if (size < (opts.minBytes ?? SCAN_AHEAD_MIN_BYTES)) return null;
    return new ScanAhead(path, names, opts.digests ?? false, Math.max(1, opts.threads ?? 1), opts.callerScans ?? true);
  }

  /**
   * The threads' results for `chunk` (the caller's next read of the file, in order), or null: then
   * the caller scans it itself (its own share of the reads; and every read once a thread failed).
   */
  async take(chunk: LineChunk): Promise<ScannedRead | null> {
    const lane = this.lanes[this.reads++ % this.lanes.length];
    if (lane === null) return null;
    const read = await lane.next();
    if (read === undefined) return null;
    if (read.offset !== chunk.offset || read.count !== chunk.count) {
      this.close();
      return null;
    }
    return read;
  }

  /** Stops the threads (their results are no longer wanted). */
  close(): void {
    for (const lane of this.lanes) lane?.close();
  }
}

/**
 * Line `k` of a read as the thread scanned it: its member spans copied into `slots` (as
 * `isVouchedObject` leaves them), and whether it was vouched for.
 */
export function vouchedAt(read: ScannedRead, k: number, slots: Int32Array): boolean {
  if (read.vouched[k] === 0) return false;
  const width = slots.length;
  const from = k * width;
  for (let i = 0; i < width; i++) slots[i] = read.slots[from + i];
  return true;
}
