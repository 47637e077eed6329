/**
 * A batch that spent its allowance of `/verify` requests before its last row (workflows/budget.ts)
 * is held: its checkpoint is kept in the work directory beside its partial files, and the batch,
 * launched again when the budget allows, goes on from it. Nothing is published or committed until
 * the batch is complete; `--resume` after a cancel plans its rows again.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { emptyAudit } from '../../src/contract/batch-audit.js';
import type { BatchResult } from '../../src/contract/run-spec.js';
import { writeFileAtomic } from '../../src/io/atomic-file.js';
import { emptyCounts, type Checkpoint } from './checkpoint.js';

/** The checkpoint a held batch left, for its next launch (with its count of requests started again), or undefined. */
export async function heldCheckpoint(path: string): Promise<Checkpoint | undefined> {
  if (!existsSync(path)) return undefined;
  const cp = JSON.parse(await readFile(path, 'utf8')) as Checkpoint;
  return { ...cp, requestsUsed: 0 };
}

/**
 * Keeps the checkpoint for the next launch and returns the held result: no counts (nothing is
 * committed), the rows answered so far (`sofar`, for the live views until the next launch reports
 * them), the requests made, and the failed attempts of this launch for the audit (the next launch
 * numbers its attempts from 1 again, so they are not carried). `stopped`: held because its worker
 * stopped (Ctrl-C), not for the budget; `carried`: rows of `sofar` answered by earlier launches.
 */
export async function holdBatch(
  path: string,
  batch: number,
  parts: Pick<BatchResult, 'mainPart' | 'sidecarPart'>,
  cp: Checkpoint,
  why: { stopped: boolean; carried: number },
): Promise<BatchResult> {
  const audit = cp.audit ?? emptyAudit();
  await writeFileAtomic(path, JSON.stringify({ ...cp, audit: { ...audit, failedAttempts: [], failedAttemptsMore: 0 } }));
  const { main, failed, dropped } = cp.counts;
  return {
    batch,
    ...parts,
    ...emptyCounts(),
    requestsUsed: cp.requestsUsed ?? 0,
    held: true,
    sofar: { main, failed, dropped },
    ...(why.stopped ? { stopped: true } : {}),
    ...(why.carried > 0 ? { carried: why.carried } : {}),
    audit: { ...emptyAudit(), failedAttempts: audit.failedAttempts, failedAttemptsMore: audit.failedAttemptsMore },
  };
}
