/**
 * The plan's second pass: the source rows, in file order, each numbered by its ordinal among the
 * non-blank lines. Lines that stop the run whatever the keys say (unparseable lines; outside
 * recovery, every shape problem) are decided here; the rest go to the key join as `Source` facts.
 */
import { isJudgeFailure } from '../../src/contract/outcome.js';
import { keyId, keyOf, keyWithNullDefaults } from '../../src/contract/row-key.js';
import { describeRolloutRowProblem } from '../../src/contract/row-shapes.js';
import type { ExternalSorter } from '../../src/io/external-sort.js';
import { chunkLine, isBlank, type JsonlLine } from '../../src/io/jsonl-lines.js';
import type { ContentDigest } from '../../src/io/content-digest.js';
import { lineDigestHalves } from '../../src/io/line-digest.js';
import { scannedReads } from '../../src/io/scan-ahead.js';
import { FastSourceRows } from '../../src/planning/fast-rows.js';
import { encode, linePlace } from '../../src/planning/key-facts.js';
import type { KeyedRecord } from '../../src/planning/keyed-records.js';
import { Verdict, type VerdictFile } from '../../src/planning/plan-verdicts.js';
import { FirstAt, parseLine, PLAN_SCAN } from './plan-lines.js';
import type { PlanRequest } from './plan-into.js';

/** What the pass found: how many ordinals it numbered, and the first line that stops the run. */
export interface SourceRows {
  ordinals: number;
  lineErrors: FirstAt<string>;
  /** False when `--limit` stopped the pass before the file's end: `identity` digests only part of it. */
  whole: boolean;
}

/** The full path for one source line: its sort record, or null (not yielded, or an error, recorded). */
function fullPath(
  req: PlanRequest,
  sourcePath: string,
  line: JsonlLine,
  ordinal: number,
  found: { verdicts: VerdictFile; lineErrors: FirstAt<string> },
): KeyedRecord | null {
  let row: Record<string, unknown>;
  try {
    row = parseLine(sourcePath, line);
  } catch (err) {
    found.verdicts.set(ordinal, Verdict.Error);
    found.lineErrors.offer(ordinal, (err as Error).message);
    return null;
  }
  if (req.judgeFailedOnly && !isJudgeFailure(row, req)) return null;
  const problem = describeRolloutRowProblem(row, line.text);
  const shape = problem ? `${sourcePath}:${line.lineNo}: ${problem}` : null;
  if (shape && !req.judgeFailedOnly) {
    found.verdicts.set(ordinal, Verdict.Error);
    found.lineErrors.offer(ordinal, shape);
    return null;
  }
  // Recovery keys rows with missing indices as null (§4.6.4); the row then fails its shape check.
  const key = req.judgeFailedOnly ? keyWithNullDefaults(row) : keyOf(row)!;
  return { key: keyId(key), nums: encode.source({ ordinal, ...linePlace(line) }), text: shape };
}

/** Adds the source rows of `sourcePath` (within the limit) to `sorter`; errors go to `verdicts`; lines read are digested into `identity`. */
export async function addSourceRows(
  req: PlanRequest,
  sourcePath: string,
  sorter: ExternalSorter<KeyedRecord>,
  verdicts: VerdictFile,
  identity: ContentDigest,
): Promise<SourceRows> {
  const found = { verdicts, lineErrors: new FirstAt<string>() };
  let ordinals = 0;
  let whole = true;
  // Outside recovery the scanner vouches for most lines (fast-rows.ts); recovery reads every row in
  // full, so no thread scans for it.
  const fast = req.judgeFailedOnly ? null : new FastSourceRows();
  const minBytes = fast ? req.scanAheadMinBytes : Infinity;
  const reads = scannedReads(sourcePath, FastSourceRows.names, { ...PLAN_SCAN, minBytes });
  const mine = new Uint32Array(2); // a digest's halves, when this thread scanned the line
  lines: for await (const { chunk, read: scanned } of reads) {
    const { data } = chunk;
    for (let k = 0; k < chunk.count; k++) {
      // Outside recovery every non-blank line is yielded, so the limit is a count of lines.
      if (!req.judgeFailedOnly && req.limit !== null && ordinals >= req.limit) {
        whole = false;
        break lines;
      }
      const start = chunk.start[k];
      const end = chunk.end[k];
      const key = fast?.keyId(data, start, end, scanned, k) ?? null;
      let record: KeyedRecord | null;
      if (key !== null) {
        const halves = scanned ? scanned.digests : mine;
        const at = scanned ? 2 * k : 0;
        if (!scanned) lineDigestHalves(data.subarray(start, end), mine, 0);
        identity.addHalves(halves[at], halves[at + 1]);
        const nums = encode.sourceAt(ordinals++, chunk.offset + start, end - start, chunk.firstLineNo + k, halves[at], halves[at + 1]);
        record = { key, nums, text: null };
      } else {
        const line = chunkLine(chunk, k, true);
        if (isBlank(line.text)) continue;
        identity.add(line.digest);
        record = fullPath(req, sourcePath, line, ordinals++, found);
      }
      if (record === null) continue;
      const adding = sorter.add(record);
      if (adding) await adding;
    }
  }
  return { ordinals, lineErrors: found.lineErrors, whole };
}
