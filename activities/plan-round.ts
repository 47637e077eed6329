import { open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { lineKeyId } from '../src/contract/row-key.js';
import { plannedRowChanged } from '../src/planning/changed-input.js';
import type { PlanSummary, RetryRules } from '../src/contract/run-spec.js';
import { writeFileAtomic } from '../src/io/atomic-file.js';
import { ExternalSorter } from '../src/io/external-sort.js';
import { lineDigest } from '../src/io/line-digest.js';
import { decode, encode, Kind } from '../src/planning/key-facts.js';
import { compareKeyedRecords, keyedRecordCodec, type KeyedRecord } from '../src/planning/keyed-records.js';
import { sidecarAttemptLines } from '../src/planning/output-cache.js';
import { checkPlanLayout, PlanWriter, withPlanReader, type PlanRecord } from '../src/planning/plan-file.js';
import { readRangeBytes, ShortReadError } from '../src/io/read-range.js';
import { withScratchDir } from '../src/io/scratch-dir.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

/** Name of the file where a batch lists the plan rows whose verdict was `judge_failed`. */
export function rejudgeListPath(workDir: string, round: number, batch: number): string {
  return join(workDir, `r${round}-b${batch}.rejudge.json`);
}

/** With `retryTerminalTimeouts`, a terminal timeout row does not stop its key (as on `--resume`). */
export interface RoundRequest extends Pick<RetryRules, 'retryTerminalTimeouts'> {
  workDir: string;
  /** The round whose committed batches `batches` selected the rows. */
  round: number;
  batches: number[];
  /** The segment the plan becomes (names its files: `plan-r{round + 1}-s{segment}`). */
  segment: number;
  /** The plan of those batches (their lists hold its row indices). */
  plan: PlanSummary;
  sidecar: string;
  maxAttempts: number;
}

/** Tuning of the round's sorts (tests force them to spill to disk). */
export interface RoundOptions {
  /** Records an external sort holds in memory before it writes a run file. */
  maxRecords?: number;
}

/** A batch's rejudge list (its rows: small); a batch without one selected none. */
async function readRejudgeList(path: string): Promise<number[]> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as number[];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** A plan row's source line, proven to be the planned bytes (else the run stops: `inputChanged`). */
async function readPlannedSource(plan: PlanSummary, source: FileHandle, rec: PlanRecord): Promise<string> {
  const bytes = await readRangeBytes(source, rec.sourceOffset, rec.sourceLength).catch((err: unknown) => {
    if (err instanceof ShortReadError) return null;
    throw err;
  });
  if (bytes === null || lineDigest(bytes) !== rec.sourceDigest) {
    throw await plannedRowChanged(plan, plan.sourcePath, `line ${rec.sourceLine}`);
  }
  return bytes.toString('utf8');
}

/** Adds every judge-failed row of the round that has a key, as a `Row` fact, to `keys`. */
async function addRows(req: RoundRequest, keys: ExternalSorter<KeyedRecord>): Promise<void> {
  const source = await open(req.plan.sourcePath, 'r');
  try {
    await withPlanReader(
      req.plan.planPath,
      async (read) => {
        for (const batch of req.batches) {
          for (const i of await readRejudgeList(rejudgeListPath(req.workDir, req.round, batch))) {
            const rec = await read(i);
            const id = lineKeyId(await readPlannedSource(req.plan, source, rec));
            if (id !== null) await keys.add({ key: id, nums: encode.row({ index: i, plan: rec }), text: null });
          }
        }
      },
      req.plan.recordBytes,
    );
  } finally {
    await source.close();
  }
}

/**
 * The key join: each key's attempts arrive before its rows, so a row is kept when its key has
 * fewer attempts than the cap and no terminal one. Kept rows go to `kept` as they are (`Row`, by index).
 */
async function keepRetryable(keys: ExternalSorter<KeyedRecord>, maxAttempts: number, kept: ExternalSorter<KeyedRecord>): Promise<void> {
  let key: string | null = null;
  let attempts = 0;
  let terminal = false;
  for await (const r of keys.sorted()) {
    if (r.key !== key) {
      key = r.key;
      attempts = 0;
      terminal = false;
    }
    if (r.nums[0] === Kind.Sidecar) {
      attempts++;
      if (decode.sidecar(r.nums).terminal) terminal = true;
    } else if (!terminal && attempts < maxAttempts) {
      await kept.add({ key: '', nums: r.nums, text: null });
    }
  }
}

/**
 * Writes round `req.round + 1`'s plan file `planPath` (see `planRound`): the kept rows in plan
 * index order. Memory is flat in the number of rows: the join of the sidecar's attempts with the
 * rows' keys, and the return to plan order, are external sorts in a scratch directory of the work
 * directory. Returns the rows written per agent, in first-written order.
 */
export async function writeRoundPlan(
  req: RoundRequest,
  planPath: string,
  opts: RoundOptions = {},
): Promise<{ rows: number; rowsPerAgent: Record<string, number> }> {
  return withScratchDir(req.workDir, `round-${req.round + 1}-`, async (dir) => {
    const sorter = (name: string) =>
      new ExternalSorter<KeyedRecord>({ dir, name, compare: compareKeyedRecords, codec: keyedRecordCodec, maxRecords: opts.maxRecords });
    const keys = sorter('round-keys');
    const kept = sorter('round-kept');
    let writer: PlanWriter | null = null;
    try {
      const policy = { repairTruncated: true, retryTerminalTimeouts: req.retryTerminalTimeouts };
      for await (const a of sidecarAttemptLines(req.sidecar, policy)) {
        await keys.add({ key: a.id, nums: encode.sidecar(a.terminal), text: null });
      }
      await addRows(req, keys);
      await keepRetryable(keys, req.maxAttempts, kept);
      writer = await PlanWriter.create(planPath, checkPlanLayout(req.plan.recordBytes));
      const rowsPerAgent: Record<string, number> = {};
      for await (const r of kept.sorted()) {
        const rec = decode.row(r.nums).plan;
        await writer.add(rec);
        const agent = req.plan.agents[rec.agent];
        rowsPerAgent[agent] = (rowsPerAgent[agent] ?? 0) + 1;
      }
      return { rows: writer.count, rowsPerAgent };
    } finally {
      await writer?.close();
      await keys.dispose();
      await kept.dispose();
    }
  });
}

/**
 * Re-judgment: plans round `round + 1` from the rows that judge-failed in `round`'s committed
 * batches `batches` (with the retry rules also `judge_invalid` and retried timeouts; each key's
 * earlier attempts are committed, so the sidecar counts them all), keeping only keys that may still be attempted —
 * fewer sidecar rows (failed attempts) than the cap and no terminal one, terminal as the rules say —
 * exactly what a NeMo Gym `--resume` with the same flags would retry. Returns the new plan (0 rows: done).
 */
export function planRound(req: RoundRequest): Promise<PlanSummary> {
  return failFastOnUserError(() =>
    whileHeartbeating(async () => {
      const name = `plan-r${req.round + 1}-s${req.segment}`;
      const planPath = join(req.workDir, `${name}.bin`);
      const { rows, rowsPerAgent } = await writeRoundPlan(req, `${planPath}.tmp`);
      await rename(`${planPath}.tmp`, planPath);
      const summary: PlanSummary = { ...req.plan, planPath, rows, rowsPerAgent, recordBytes: checkPlanLayout(req.plan.recordBytes) };
      await writeFileAtomic(join(req.workDir, `${name}.json`), JSON.stringify(summary));
      return summary;
    }),
  );
}
