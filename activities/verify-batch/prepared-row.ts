/** A row of a batch ready to send, and what routing knows of it once answered. */
import { stampsFromPayload, type Stamps } from '../../src/contract/outcome.js';
import { verifyRequest } from '../../src/contract/payload.js';
import { operationId } from '../../src/contract/rejudgment.js';
import type { PlanRecord } from '../../src/planning/plan-file.js';
import { atifPayload } from './atif-payload.js';
import type { VerifyBatchRequest } from './request.js';
import type { RowFacts } from './route-reply.js';
import type { PlannedRow } from './row-windows.js';

/** A row ready to send (lanes.ts prepares it while the lane's previous request is in flight). */
export interface Prepared {
  /** Its index in the batch's records. */
  i: number;
  rec: PlanRecord;
  /** The `/verify` body. */
  payload: string;
  stamps: Stamps;
  atif: boolean;
  /** In a re-judgment, the source row as read: the saved row of the verdict it settles. */
  saved?: string;
  /** The --rollouts row's task and old reward, when the run keeps a live estimate (`req.paired`). */
  old?: { task: string; reward: number | null };
}

/** Row `i` of the batch (its plan record `rec`, read as `row`) with its `/verify` body built and its stamps. */
export async function prepareRow(req: VerifyBatchRequest, i: number, rec: PlanRecord, row: PlannedRow): Promise<Prepared> {
  // A re-judgment saves the row it settles; its window is gone by the time the row is answered.
  const saved = req.operation === undefined ? undefined : row.source();
  if (req.plan.inputFormat === 'atif') {
    const input = row.input();
    const atif = await atifPayload(req.plan.sourcePath, rec, saved ?? row.source(), input);
    return { i, rec, payload: atif.payload, stamps: { ...stampsFromPayload(input), atifProvenance: atif.provenance }, atif: true, saved };
  }
  // The rollout row's task and old reward come from the scan that builds the payload (no second pass).
  const gym = verifyRequest(row.input(), saved ?? row.source());
  return { i, rec, payload: gym.payload, stamps: gym.stamps, atif: false, saved, ...(req.paired ? { old: gym.old } : {}) };
}

/** What routing knows of an answered row besides its reply. */
export function rowFacts(req: VerifyBatchRequest, p: Prepared, elapsedMs: number, throttled: number, throttleWaitMs = 0): RowFacts {
  const { operation } = req;
  const rejudgment =
    operation === undefined || p.saved === undefined
      ? undefined
      : {
          opId: operationId(operation, p.stamps.task, p.stamps.rollout),
          judged: p.payload,
          saved: p.saved,
          ...(req.tag === 'saved' ? { savedResult: true } : {}),
        };
  const latencyMs = elapsedMs - throttleWaitMs;
  return { agent: req.plan.agents[p.rec.agent], planIndex: req.from + p.i, latencyMs, throttleWaitMs, throttled, atif: p.atif, rejudgment };
}
