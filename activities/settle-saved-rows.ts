/**
 * `--rejudge-saved`: settles the re-verified saved rows in the main output, the way the
 * invalid-judge move rewrites `--rollouts` (move-invalid-judge-rows.ts): the whole output is written
 * to a temp file next to it — each selected row replaced, in its place, by its settled row (its
 * grading replaced: src/contract/rejudgment.ts `settledSavedRow`), every other byte copied as it is —
 * fsynced, then renamed over the output and the directory fsynced. A kill before the rename leaves
 * the old output (the next attempt removes the temp file); after it, the new one. A retried attempt
 * finds the settled rows carrying their operation ids and settles nothing twice. Withdrawn
 * re-verifications (no grade) and failed ones wrote no row in the part: their saved rows stay.
 */
import { open, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ConfigError } from '../src/contract/errors.js';
import { OPERATION_ID_KEY } from '../src/contract/keys.js';
import { rawField } from '../src/contract/json-spans.js';
import { lineKeyId } from '../src/contract/row-key.js';
import { fsyncDir } from '../src/io/atomic-file.js';
import { isBlank, jsonlLines } from '../src/io/jsonl-lines.js';
import { withRunLock } from '../src/io/run-lock.js';
import { writingTo } from '../src/io/write-errors.js';
import { writeFully } from '../src/io/write-fully.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface SettleRequest {
  output: string;
  /** The output's length as the workflow recorded it. */
  mainLength: number;
  /** The batches' main parts: the settled rows (all settled by one rewrite: the plan's offsets point into the output as it was). */
  parts: string[];
}

export interface SettleResult {
  mainLength: number;
  /** Rows replaced by this attempt, and rows found settled already (an earlier attempt's rename). */
  settled: number;
  already: number;
}

/** The temp file that replaces the output: hidden, next to it. */
export function settleTempPath(output: string): string {
  return join(dirname(output), `.${basename(output)}.settle-saved.tmp`);
}

/** The parts' settled rows by key, with their operation ids. */
async function settledByKey(parts: string[]): Promise<Map<string, { row: string; op: string | undefined }>> {
  const rows = new Map<string, { row: string; op: string | undefined }>();
  for (const part of parts)
    for (const line of (await readFile(part, 'utf8')).split('\n')) {
      if (isBlank(line)) continue;
      const key = lineKeyId(line);
      if (key !== null) rows.set(key, { row: line, op: rawField(line, OPERATION_ID_KEY) });
    }
  return rows;
}

/** Copies bytes [from, to) of `src` to `out`. */
async function copyRange(src: FileHandle, out: FileHandle, from: number, to: number, path: string): Promise<void> {
  const chunk = Buffer.allocUnsafe(Math.min(8 << 20, Math.max(1, to - from)));
  for (let at = from; at < to;) {
    const { bytesRead } = await src.read(chunk, 0, Math.min(chunk.length, to - at), at);
    if (bytesRead === 0) break;
    await writeFully(out, chunk.subarray(0, bytesRead), null, path);
    at += bytesRead;
  }
}

/** Writes the settled output to `temp`; returns what it replaced. */
async function writeSettled(req: SettleRequest, temp: string, rows: Map<string, { row: string; op: string | undefined }>) {
  const size = (await stat(req.output)).size;
  const src = await open(req.output, 'r');
  const out = await writingTo(temp, () => open(temp, 'w'));
  let settled = 0;
  let already = 0;
  try {
    await out.chmod((await src.stat()).mode & 0o7777);
    let copied = 0;
    for await (const l of jsonlLines(req.output)) {
      const key = isBlank(l.text) || !l.terminated ? null : safeKey(l.text);
      const s = key === null ? undefined : rows.get(key);
      if (s === undefined) continue;
      if (rawField(l.text, OPERATION_ID_KEY) === s.op) {
        already++;
        continue;
      }
      await copyRange(src, out, copied, l.offset, temp);
      await writeFully(out, Buffer.from(s.row + '\n'), null, temp);
      copied = l.offset + l.rawLength + 1;
      settled++;
    }
    await copyRange(src, out, copied, size, temp);
    await out.sync();
    if (size !== req.mainLength && already === 0)
      throw new ConfigError(
        `${req.output} is ${size} bytes, not the ${req.mainLength} this run recorded: another program changed it. Restore it, or start over with --overwrite.`,
      );
    return { settled, already };
  } finally {
    await src.close();
    await out.close();
  }
}

function safeKey(text: string): string | null {
  try {
    return lineKeyId(text);
  } catch {
    return null;
  }
}

/** Test hook: `REVERIFY_TEST_KILL_SETTLE_AT=written|renamed` SIGKILLs the worker at that step; unset in real runs. */
function killAt(step: 'written' | 'renamed'): void {
  if (process.env.REVERIFY_TEST_KILL_SETTLE_AT === step) process.kill(process.pid, 'SIGKILL');
}

/** Settles the part's rows in the output (see the file comment). */
export async function settleRows(req: SettleRequest): Promise<SettleResult> {
  const temp = settleTempPath(req.output);
  await rm(temp, { force: true });
  const rows = await settledByKey(req.parts);
  if (rows.size === 0) return { mainLength: req.mainLength, settled: 0, already: 0 };
  const done = await writeSettled(req, temp, rows).catch(async (err: unknown) => {
    await rm(temp, { force: true });
    throw err;
  });
  killAt('written');
  if (done.settled > 0) {
    await writingTo(req.output, () => rename(temp, req.output));
    await fsyncDir(dirname(req.output));
    killAt('renamed');
  } else await rm(temp, { force: true });
  return { mainLength: (await stat(req.output)).size, ...done };
}

/** The activity: holds the run lock while it rewrites the output. */
export function settleSavedRows(req: SettleRequest): Promise<SettleResult> {
  return failFastOnUserError(() => whileHeartbeating(() => withRunLock(req.output, () => settleRows(req))));
}
