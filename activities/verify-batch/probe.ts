import { verifyRequest } from '../../src/contract/payload.js';
import type { PlanRecord } from '../../src/planning/plan-file.js';
import type { VerifyReply } from '../../src/verifier/client.js';
import { atifPayload } from './atif-payload.js';
import { readPlannedRows } from './planned-rows.js';
import type { VerifyBatchRequest } from './request.js';
import type { ReplyCounts } from './server-replies.js';

/**
 * True if the server answers another row of the batch (of the same server) with a 2xx now, so
 * row `i`'s 5xx is its own and not an outage. Tries `first` (a row answered before), then the rows
 * after `i` in the batch, done ones included (read from disk), three at most. A batch with no
 * other row of that server asks `alone` instead (`loneRowFailure`).
 */
export async function serverAnswersOthers(
  req: VerifyBatchRequest,
  records: PlanRecord[],
  i: number,
  first: number | null,
  send: (body: string) => Promise<VerifyReply>,
  alone: () => Promise<boolean>,
): Promise<boolean> {
  const after = records.map((_, n) => (i + 1 + n) % records.length);
  const candidates = [...new Set([...(first === null ? [] : [first]), ...after])].filter(
    (j) => j !== i && records[j].server === records[i].server,
  );
  if (candidates.length === 0) return alone();
  for (const j of candidates.slice(0, 3)) {
    const read = await readPlannedRows(req, records, [j]);
    const body =
      req.plan.inputFormat === 'atif'
        ? (await atifPayload(req.plan.sourcePath, records[j], read.source(0), read.input(0))).payload
        : verifyRequest(read.input(0), read.source(0)).payload;
    if ((await send(body)).kind === 'ok') return true;
  }
  return false;
}

/**
 * Whether the failure of a row alone in its batch (for its server) is its own, from what the server
 * answered the other `/verify` requests of this process during the row's `ownTries` failed tries
 * (`seen`, the row's own tries included): its own if the server answered one of them; an outage if
 * it failed them too; if nothing else was sent, its own when the server answers `GET /` (`up`).
 */
export async function loneRowFailure(seen: ReplyCounts, ownTries: number, up: () => Promise<boolean>): Promise<boolean> {
  if (seen.answered > 0) return true;
  if (seen.failed > ownTries) return false;
  return up();
}
