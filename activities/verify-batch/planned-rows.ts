/** Reading a batch's rows by plan offset, each proven to be the planned bytes; naming a row in messages. */
import { plannedRowChanged } from '../../src/planning/changed-input.js';
import type { Stamps } from '../../src/contract/outcome.js';
import { UNCHECKED, type PlanRecord } from '../../src/planning/plan-file.js';
import { ChangedRangeError, readRangesBytes, type ByteRange } from '../../src/io/read-ranges.js';
import type { VerifyBatchRequest } from './request.js';

/** A row for messages: `file:line (key (t, r))`, the key as its exact digits. */
export function rowPlace(req: Pick<VerifyBatchRequest, 'plan'>, rec: PlanRecord, stamps: Stamps): string {
  return `${req.plan.sourcePath}:${rec.sourceLine} (key (${stamps.task}, ${stamps.rollout}))`;
}

/** The sidecar this batch's failures are committed to, for messages. */
export function sidecarPathOf(req: Pick<VerifyBatchRequest, 'outputSidecar'>): string {
  return req.outputSidecar ?? 'the sidecar';
}

/** A plan checksum to prove a read by, or undefined for a legacy plan's record (unchecked). */
const proofOf = (sum: number) => (sum === UNCHECKED ? undefined : sum);

/** The rows read: the k-th requested row's source and input, as bytes or as texts decoded when asked for. */
export interface PlannedRows {
  source(k: number): string;
  input(k: number): string;
  sourceBytes(k: number): Buffer;
  inputBytes(k: number): Buffer;
}

/**
 * The source and input rows of plan records `rows`, each proven to be the bytes the plan read
 * (its checksum): a file changed since planning stops the run (`InputChangedError`) before
 * anything is sent or written. Kept as bytes (outside V8's heap) until a row is used: a batch holds
 * its rows for its whole life, and as strings they would be copied into the old generation.
 */
export async function readPlannedRows(
  req: Pick<VerifyBatchRequest, 'plan' | 'inputsPath'>,
  records: PlanRecord[],
  rows: number[],
): Promise<PlannedRows> {
  const read = async (path: string, where: (rec: PlanRecord) => string, range: (rec: PlanRecord) => ByteRange) => {
    try {
      return await readRangesBytes(
        path,
        rows.map((i) => range(records[i])),
      );
    } catch (err) {
      if (!(err instanceof ChangedRangeError)) throw err;
      throw await plannedRowChanged(req.plan.files, path, where(records[rows[err.index]]));
    }
  };
  const sources = await read(
    req.plan.sourcePath,
    (rec) => `line ${rec.sourceLine}`,
    (rec) => ({ offset: rec.sourceOffset, length: rec.sourceLength, sum: proofOf(rec.sourceSum) }),
  );
  const inputs = await read(
    req.inputsPath,
    (rec) => `the materialized input of ${req.plan.sourcePath}:${rec.sourceLine}`,
    (rec) => ({ offset: rec.inputOffset, length: rec.inputLength, sum: proofOf(rec.inputSum) }),
  );
  return {
    source: (k) => sources[k].toString('utf8'),
    input: (k) => inputs[k].toString('utf8'),
    sourceBytes: (k) => sources[k],
    inputBytes: (k) => inputs[k],
  };
}
