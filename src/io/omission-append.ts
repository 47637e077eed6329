/**
 * Appends the omission rows of one `reverify omit` to the failures sidecar exactly once, all or
 * nothing, by the committer's rule (committer.ts `commitParts`: truncate to the recorded length,
 * append, fsync). The record is a journal beside the output (`omittingPaths`): the rows, then a
 * header with the sidecar's length before them, each written atomically, the header last. A crash
 * before the header leaves nothing appended (the rows file is removed); after it, the next
 * `reverify omit` finishes the append (`finishOmission`): bytes past the recorded length that are a
 * prefix of the rows are the remains of the crashed append and are cut and written again; rows
 * already whole there are left alone. Callers hold the run lock.
 */
import { open, readFile, rm, stat } from 'node:fs/promises';
import { ConfigError } from '../contract/errors.js';
import { omittingPaths } from '../contract/file-names.js';
import { lineKeyId } from '../contract/row-key.js';
import { writeFileAtomic } from './atomic-file.js';
import { commitParts } from './committer.js';
import { exists } from './file-exists.js';

async function sizeOf(path: string): Promise<number> {
  return (await exists(path)) ? (await stat(path)).size : 0;
}

/** `length` bytes of `path` from `start` (fewer at its end). */
async function bytesAt(path: string, start: number, length: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, start);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

async function dropJournal(output: string): Promise<void> {
  const j = omittingPaths(output);
  await rm(j.header, { force: true });
  await rm(j.rows, { force: true });
}

/**
 * Finishes the append an interrupted `reverify omit` recorded, if any; returns the key ids of the
 * rows it finished (none: no journal), or null when the sidecar changed past the recorded length in
 * another way (another writer after the crash): the journal is dropped.
 */
export async function finishOmission(output: string, sidecar: string): Promise<string[] | null> {
  const j = omittingPaths(output);
  if (!(await exists(j.header))) {
    await rm(j.rows, { force: true });
    return [];
  }
  const { sidecar_length: recorded } = JSON.parse(await readFile(j.header, 'utf8')) as { sidecar_length: number };
  const rows = await readFile(j.rows);
  const size = await sizeOf(sidecar);
  if (size < recorded)
    throw new ConfigError(
      `${sidecar} is shorter (${size} bytes) than before an interrupted 'reverify omit' (${recorded} bytes): another program truncated it; restore it, or delete ${j.header} to give up that omission`,
    );
  const past = await bytesAt(sidecar, recorded, Math.min(size - recorded, rows.length));
  let finished: string[] | null = rows
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => lineKeyId(l) ?? '');
  if (!rows.subarray(0, past.length).equals(past)) finished = null;
  else if (size - recorded < rows.length) await commitParts(sidecar, recorded, [j.rows]);
  await dropJournal(output);
  return finished;
}

/** Appends `rows` (whole lines, each ending in `\n`) to `sidecar` exactly once; see the file comment. */
export async function appendOmissions(output: string, sidecar: string, rows: string): Promise<void> {
  const j = omittingPaths(output);
  await writeFileAtomic(j.rows, rows);
  const recorded = await sizeOf(sidecar);
  await writeFileAtomic(j.header, JSON.stringify({ sidecar_length: recorded }) + '\n');
  await commitParts(sidecar, recorded, [j.rows]);
  await dropJournal(output);
}
