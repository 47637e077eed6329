/**
 * The seed's `record_unstarted(row)` for a plain run: the rollouts a run's plan holds that have no
 * row in the main output or the sidecar when the run ends early (cancelled, also while paused on
 * its request budget; failed), saved as evidence in `<stem>_unstarted.jsonl`, one line per
 * rollout: `{"_ng_task_index":…,"_ng_rollout_index":…,"_ng_unstarted":true,"_ng_unstarted_reason":…}`
 * (the indices as the source wrote them). It is not an outcome: no reader of the outputs sees it,
 * `--resume` runs those rollouts, and the coverage counts them as never dispatched. The file is
 * written whole (temp file, fsync, rename), so writing it again after a crash gives the same file,
 * never a second copy of a line; none is left when nothing is unstarted.
 *
 * Memory is flat in the number of rows: the plan's keys and the files' keys are joined by an
 * external sort in a scratch directory.
 */
import { existsSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ROLLOUT_INDEX_KEY, TASK_INDEX_KEY } from '../contract/keys.js';
import { rawValuesOfLine } from '../contract/line-values.js';
import { lineKeyId, rawKeyId } from '../contract/row-key.js';
import { publishFile } from '../io/atomic-file.js';
import { OutputBuffer } from '../io/output-buffer.js';
import { ExternalSorter, groupsOf } from '../io/external-sort.js';
import { jsonlLines } from '../io/jsonl-lines.js';
import { withScratchDir } from '../io/scratch-dir.js';
import { compareKeyedRecords, keyedRecordCodec, type KeyedRecord } from './keyed-records.js';
import { outputKeyIdChunks, sidecarAttemptChunks } from './output-cache.js';
import { plannedSourceChunks } from './planned-rows.js';

/** The unstarted marker and its reason (the seed's evidence, reverify's member names). */
export const UNSTARTED_KEY = '_ng_unstarted';
export const UNSTARTED_REASON_KEY = '_ng_unstarted_reason';

/** Record kinds of the join: a key's rows in the files sort before its plan rows. */
const IN_FILES = 0;
const PLANNED = 1;

export interface UnstartedRequest {
  /** The first round's plan (later rounds only plan keys that have sidecar rows). */
  plan: { planPath: string; sourcePath: string; rows: number; recordBytes?: number } | null;
  output: string;
  sidecar: string;
  /** `<stem>_unstarted.jsonl`. */
  path: string;
  reason: string;
}

const KEY_NAMES = [TASK_INDEX_KEY, ROLLOUT_INDEX_KEY] as const;

/** Lines are written a megabyte at a time: a write per line made 10^7 lines wait on 10^7 writes through the thread pool. */
const WRITE_BYTES = 1 << 20;

/** The two index texts of a source line's bytes, as written; null when it has no key. */
function rawKey(line: Uint8Array): { id: string; text: string } | null {
  const [task, rollout] = rawValuesOfLine(line, KEY_NAMES);
  if (task === undefined || rollout === undefined) return null;
  const id = rawKeyId(task, rollout);
  return id === null ? null : { id, text: `"${TASK_INDEX_KEY}":${task},"${ROLLOUT_INDEX_KEY}":${rollout}` };
}

/** The plan's keys (its rows read a chunk at a time and scanned as bytes; not proven: this is evidence, not a send). */
async function addPlanKeys(plan: NonNullable<UnstartedRequest['plan']>, sorter: ExternalSorter<KeyedRecord>): Promise<void> {
  for await (const { from, records, lines } of plannedSourceChunks(plan, 0, plan.rows, false)) {
    for (let k = 0; k < records.length; k++) {
      const key = rawKey(lines[k]);
      if (key === null) continue;
      const adding = sorter.add({ key: key.id, nums: [PLANNED, from + k], text: key.text });
      if (adding) await adding;
    }
  }
}

async function addFileKeys(req: UnstartedRequest, sorter: ExternalSorter<KeyedRecord>): Promise<void> {
  const policy = { repairTruncated: true, retryTerminalTimeouts: false };
  for await (const ids of outputKeyIdChunks(req.output, policy))
    for (const id of ids) await sorter.add({ key: id, nums: [IN_FILES], text: null });
  for await (const attempts of sidecarAttemptChunks(req.sidecar, policy))
    for (const a of attempts) await sorter.add({ key: a.id, nums: [IN_FILES], text: null });
}

/** Writes (or, when none is left, removes) the evidence file; returns the rollouts it lists. */
export async function recordUnstarted(req: UnstartedRequest): Promise<number> {
  const plan = req.plan;
  if (plan === null || plan.rows === 0) {
    await rm(req.path, { force: true });
    return 0;
  }
  const dir = dirname(req.output);
  const count = await withScratchDir(dir, '.reverify-unstarted-', async (scratch) => {
    const sorter = new ExternalSorter<KeyedRecord>({
      dir: scratch,
      name: 'unstarted',
      compare: compareKeyedRecords,
      codec: keyedRecordCodec,
    });
    const tmp = `${req.path}.tmp-${process.pid}`;
    const out = await open(tmp, 'w');
    let n = 0;
    let joined = false;
    try {
      await addPlanKeys(plan, sorter);
      await addFileKeys(req, sorter);
      const reason = JSON.stringify(req.reason);
      const lines = new OutputBuffer(out, tmp);
      for await (const group of groupsOf(sorter.sorted(), (r) => r.key)) {
        if (group[0].nums[0] !== PLANNED) continue;
        lines.text(`{${group[0].text},"${UNSTARTED_KEY}":true,"${UNSTARTED_REASON_KEY}":${reason}}\n`);
        if (lines.size >= WRITE_BYTES) await lines.drain();
        n++;
      }
      await lines.drain();
      joined = true;
    } finally {
      await out.close();
      await sorter.dispose();
      // A temporary file is published below or removed, even when the join failed.
      if (!joined || n === 0) await rm(tmp, { force: true });
    }
    if (n > 0) await publishFile(tmp, req.path);
    return n;
  });
  if (count === 0) await rm(req.path, { force: true });
  return count;
}

/**
 * Drops the rollouts of `keys` (key ids) from the evidence file at `path` (rewritten whole, or
 * removed when none is left): a rollout omitted on purpose since is no longer unstarted.
 */
export async function dropUnstarted(path: string, keys: ReadonlySet<string>): Promise<void> {
  if (!existsSync(path)) return;
  const tmp = `${path}.tmp-${process.pid}`;
  const out = await open(tmp, 'w');
  let kept = 0;
  try {
    const lines = new OutputBuffer(out, tmp);
    for await (const line of jsonlLines(path)) {
      if (line.text.trim() === '' || keys.has(lineKeyId(line.text) ?? '')) continue;
      lines.text(line.text + '\n');
      if (lines.size >= WRITE_BYTES) await lines.drain();
      kept++;
    }
    await lines.drain();
  } finally {
    await out.close();
  }
  if (kept === 0) await Promise.all([rm(tmp, { force: true }), rm(path, { force: true })]);
  else await publishFile(tmp, path);
}
