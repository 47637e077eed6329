/**
 * Recovery mode under `--retry-invalid-judge-responses` (NeMo Gym 0.7.0): rows of --rollouts flagged
 * `invalid_judge_response` (older builds stored such verdicts as scored rows) are moved into its
 * sidecar as `judge_invalid` failures before anything else reads the pair, so the recovery judges
 * them again instead of seeding them as successes.
 *
 * Crash safety: both files are written whole to temp files next to them and fsynced; then the
 * sidecar is renamed into place, then --rollouts (each rename made durable by an fsync of the
 * directory). A kill before the first rename leaves the old pair (the next move removes the temp
 * files); after the second, the new pair. Between the two, the new sidecar holds the moved rows
 * with their marker while the old --rollouts still holds them: the next move (the same command
 * again, or NeMo Gym itself, which keys on the same marker) drops those rows from --rollouts without
 * adding them twice. No row is ever lost; none ends up in both files once a move completes.
 */
import { copyFile, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { sidecarPath } from '../src/contract/file-names.js';
import { isFlaggedInvalidJudge, isMovedRow, moveIdentity, movedRow, RowFields } from '../src/contract/invalid-judge-move.js';
import { DELIVERABLES_DIR_KEY } from '../src/contract/keys.js';
import { movedInvalidJudgeRows } from '../src/contract/messages.js';
import { fsyncDir } from '../src/io/atomic-file.js';
import { OutputBuffer } from '../src/io/output-buffer.js';
import { isBlank, jsonlLines, type JsonlLine } from '../src/io/jsonl-lines.js';
import { writingTo } from '../src/io/write-errors.js';
import { hasDeliverable } from './deliverables.js';
import { withRunLock } from '../src/io/run-lock.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';
import { malformedJsonLine, notUtf8Line } from '../src/contract/line-errors.js';

/** The moments of a move, in order: tests kill the process at each one. */
export const MOVE_STEPS = ['scanned', 'row-moved', 'temps-written', 'sidecar-replaced', 'rollouts-replaced'] as const;
export type MoveStep = (typeof MOVE_STEPS)[number];

export interface MoveResult {
  /** Rows of --rollouts flagged `invalid_judge_response` (all leave it). */
  flagged: number;
  /** Of those, rows added to the sidecar (the others were there already, from an interrupted move). */
  moved: number;
}

/** The temp file that replaces `path`: hidden, next to it (a rename within one directory is atomic). */
export function moveTempPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.move-invalid-judge.tmp`);
}

/** The line's fields; a line that is not UTF-8 or not one JSON object stops the move with `file:line`. */
function fieldsOf(path: string, line: JsonlLine): RowFields {
  if (!line.utf8) throw notUtf8Line(path, line.lineNo);
  try {
    return new RowFields(line.text);
  } catch (err) {
    throw malformedJsonLine(path, line.lineNo, line.text, err);
  }
}

/** The non-blank lines of a JSONL file with their fields (none when the file does not exist). */
async function* rowsOf(path: string): AsyncGenerator<RowFields> {
  const exists = await stat(path).then(
    () => true,
    () => false,
  );
  if (!exists) return;
  for await (const line of jsonlLines(path)) if (!isBlank(line.text)) yield fieldsOf(path, line);
}

async function lastByte(path: string, size: number): Promise<number> {
  const fh = await open(path, 'r');
  try {
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, size - 1);
    return b[0];
  } finally {
    await fh.close();
  }
}

/** Opens the sidecar's temp file holding a copy of the sidecar, ended by a newline, ready to append. */
async function openSidecarTemp(sidecar: string, temp: string): Promise<{ fh: FileHandle; out: OutputBuffer }> {
  const found = await stat(sidecar).catch(() => null);
  if (found) await copyFile(sidecar, temp);
  const fh = await open(temp, 'a');
  const out = new OutputBuffer(fh, temp);
  if (found) {
    await fh.chmod(found.mode & 0o7777);
    if (found.size > 0 && (await lastByte(sidecar, found.size)) !== 0x0a) out.byte(0x0a); // its last row stays whole
  }
  return { fh, out };
}

/**
 * Writes the new --rollouts (its rows less the flagged ones) and, when a flagged row is not in the
 * sidecar yet, the new sidecar (the old one plus those rows) to their temp files, fsynced. Returns
 * how many rows the new sidecar adds.
 */
async function writeTemps(
  rolloutsPath: string,
  sidecar: string,
  temps: { rollouts: string; sidecar: string },
  known: Set<string>,
  at: (step: MoveStep) => void,
): Promise<number> {
  const fh = await writingTo(temps.rollouts, () => open(temps.rollouts, 'w'));
  let side: { fh: FileHandle; out: OutputBuffer } | null = null;
  let moved = 0;
  try {
    await fh.chmod((await stat(rolloutsPath)).mode & 0o7777);
    const kept = new OutputBuffer(fh, temps.rollouts);
    let lines = 0;
    for await (const row of rowsOf(rolloutsPath)) {
      if (++lines % 1000 === 0) await kept.drain();
      if (!isFlaggedInvalidJudge(row)) {
        kept.text(row.text + '\n');
        continue;
      }
      const id = moveIdentity(row);
      if (known.has(id)) continue; // in the sidecar already: an earlier move was interrupted
      known.add(id);
      side ??= await writingTo(temps.sidecar, () => openSidecarTemp(sidecar, temps.sidecar));
      side.out.text(movedRow(row, await hasDeliverable(row.value(DELIVERABLES_DIR_KEY))) + '\n');
      if (++moved === 1) {
        await side.out.drain();
        at('row-moved');
      }
    }
    await kept.drain();
    await fh.sync();
    if (side) {
      await side.out.drain();
      await side.fh.sync();
    }
    return moved;
  } finally {
    await fh.close();
    await side?.fh.close();
  }
}

/** Moves the flagged rows of `rolloutsPath` into its sidecar (see the file comment); `at` is called at each step. */
export async function moveFlaggedRows(rolloutsPath: string, at: (step: MoveStep) => void = () => undefined): Promise<MoveResult> {
  const sidecar = sidecarPath(rolloutsPath);
  const temps = { rollouts: moveTempPath(rolloutsPath), sidecar: moveTempPath(sidecar) };
  // Left by a move killed before its renames: the originals are intact, the temp files are stale.
  await Promise.all([rm(temps.rollouts, { force: true }), rm(temps.sidecar, { force: true })]);
  let flagged = 0;
  for await (const row of rowsOf(rolloutsPath)) if (isFlaggedInvalidJudge(row)) flagged++;
  if (flagged === 0) return { flagged: 0, moved: 0 };
  const known = new Set<string>();
  for await (const row of rowsOf(sidecar)) if (isMovedRow(row)) known.add(moveIdentity(row));
  at('scanned');

  // A failure before the renames leaves the originals as they were, and no temp file behind.
  const moved = await writeTemps(rolloutsPath, sidecar, temps, known, at).catch(async (err: unknown) => {
    await Promise.all([rm(temps.rollouts, { force: true }), rm(temps.sidecar, { force: true })]);
    throw err;
  });
  at('temps-written');
  if (moved > 0) {
    await writingTo(sidecar, () => rename(temps.sidecar, sidecar));
    await fsyncDir(dirname(sidecar));
    at('sidecar-replaced');
  }
  await writingTo(rolloutsPath, () => rename(temps.rollouts, rolloutsPath));
  await fsyncDir(dirname(rolloutsPath));
  at('rollouts-replaced');
  return { flagged, moved };
}

/**
 * Test hook: `REVERIFY_TEST_KILL_MOVE_AT=<step>` makes the worker SIGKILL itself at that step of a
 * move (test/integration/move-invalid-judge.test.ts); unset in real runs.
 */
function killHook(): (step: MoveStep) => void {
  const killAt = process.env.REVERIFY_TEST_KILL_MOVE_AT;
  return (step) => {
    if (step === killAt) process.kill(process.pid, 'SIGKILL');
  };
}

/** The move as an activity: returns what it did and the line to tell the user (null: nothing moved). */
export function moveInvalidJudgeRows(req: { rolloutsPath: string }): Promise<MoveResult & { message: string | null }> {
  return failFastOnUserError(() =>
    // It rewrites --rollouts and its sidecar: the run that owns them is locked for the move.
    whileHeartbeating(() =>
      withRunLock(req.rolloutsPath, async () => {
        const r = await moveFlaggedRows(req.rolloutsPath, killHook());
        return { ...r, message: r.flagged > 0 ? movedInvalidJudgeRows(r, req.rolloutsPath, sidecarPath(req.rolloutsPath)) : null };
      }),
    ),
  );
}
