/**
 * Commits: part files appended to the outputs exactly once (the commit activity truncates to the
 * lengths last recorded, appends, and returns the new ones, which are recorded here), and the
 * counts of the batches committed added to the run's state.
 */
import { CancellationScope, condition } from '@temporalio/workflow';
import type { BatchResult, RunSpec } from '../src/contract/run-spec.js';
import { quick } from './activity-proxies.js';
import { adaptLimit } from './adaptive-limit.js';
import { addCounts, committed, type InFlight, type RunState } from './run-state.js';
import { decodePaired } from '../src/contract/paired-wire.js';
import { feedBatch } from '../src/stats/run-estimate.js';
import { settleRejudged } from '../src/stats/rejudged-units.js';
import { checkStopRules } from './stop-rules.js';
import { segmentOf } from './segments.js';

/** Appends part files to the outputs exactly once and records the new lengths. */
export async function appendParts(
  spec: RunSpec,
  st: RunState,
  mainParts: string[],
  sidecarParts: string[],
  summary: string,
): Promise<void> {
  // A commit is frequent: a worker killed in the middle of one is noticed as fast as in a batch.
  const heartbeatTimeout = Math.min(spec.heartbeatTimeoutMs, 30_000);
  const lengths = await quick.commitBatches.executeWithOptions({ summary, heartbeatTimeout }, [
    {
      outputs: st.outputs!,
      mainLength: st.mainLength,
      sidecarLength: st.sidecarLength,
      mainParts,
      sidecarParts,
      obsolete: st.obsolete,
    },
  ]);
  st.mainLength = lengths.mainLength;
  st.sidecarLength = lengths.sidecarLength;
  st.obsolete = [...mainParts, ...sidecarParts];
}

/**
 * Commits finished batches (in batch order) and adds their counts. The batches are in no other
 * list once taken out of the window's `ready`: a commit, once begun, is not cancelled (a cancel
 * that arrives meanwhile takes effect at the next wait).
 */
export async function commitBatches(spec: RunSpec, st: RunState, batches: BatchResult[]): Promise<void> {
  batches.sort((a, b) => a.batch - b.batch);
  const append = () =>
    appendParts(
      spec,
      st,
      batches.map((b) => b.mainPart),
      batches.map((b) => b.sidecarPart),
      commitSummary(st, batches),
    );
  await CancellationScope.nonCancellable(append);
  const withdrawn = batches.reduce((n, b) => n + (b.withdrawn ?? 0), 0);
  if (withdrawn > 0)
    st.messages.push(
      `Re-judgment withdrawn for ${withdrawn} row(s): the verifier answered without a grade (no reward); ` +
        `nothing was written, their failures stay selected and the next pass judges them again`,
    );
  for (const b of batches) {
    addCounts(st.totals, b);
    committed(st, b);
    // The live estimate takes the first round's batches in plan order (src/stats/run-estimate.ts);
    // a re-judgment round's settle the units its rows left pending, once the first pass has entered (src/stats/rejudged-units.ts).
    if (st.estimate && roundOf(st, b) === 0) feedBatch(st.estimate, b.batch, decodePaired(b.paired));
    else if (st.estimate) settleRejudged(st.estimate, decodePaired(b.paired), !!st.stoppedEarly);
    if (st.mainRows !== null) st.mainRows += b.main;
    // A withdrawn re-judgment (answered without a grade) leaves its failure selected for the next round.
    st.roundJudgeFailed += b.judgeFailed + (b.withdrawn ?? 0);
    // Shown by the progress line (`concurrency 8/32`), not as messages: it may change all day.
    const limit = adaptLimit(st, st.concurrency, b);
    st.effective = limit.effective;
    st.baselineLatencyMs = limit.baselineLatencyMs;
    st.pendingLatency = limit.pendingLatency;
    if (limit.throttledOnce) st.throttledOnce = true;
  }
  // `--stop-when`, from the counts just committed (stop-rules.ts).
  checkStopRules(spec, st);
}

/** `commit batches 3,4`, `commit round 2 batches 51,52`, or with batches of several rounds each named with its round. */
function commitSummary(st: RunState, batches: BatchResult[]): string {
  const rounds = new Set(batches.map((b) => roundOf(st, b)));
  const round = (r: number) => (r > 0 ? `round ${r + 1} ` : '');
  if (rounds.size === 1) return `commit ${round([...rounds][0])}batches ${batches.map((b) => b.batch + 1).join(',')}`;
  return `commit batches ${batches.map((b) => `${round(roundOf(st, b))}${b.batch + 1}`).join(', ')}`;
}

/** The round of a committed batch: its segment's (segments.ts). */
function roundOf(st: RunState, b: BatchResult): number {
  return st.segments ? segmentOf(st.segments, b.batch).round : st.round;
}

/**
 * The run is being cancelled (`reverify cancel`): the batches in flight were asked to stop; they
 * hand back the rows they finished (their requests in flight may answer first), which are committed
 * before the run ends, so no paid-for verdict is lost.
 */
export async function commitHandedBack(spec: RunSpec, st: RunState, inflight: Map<number, InFlight>, ready: BatchResult[]): Promise<void> {
  await CancellationScope.nonCancellable(async () => {
    await condition(() => inflight.size === 0);
    const handedBack = ready.splice(0, ready.length).filter((b) => b.main + b.failed + b.dropped > 0);
    if (handedBack.length === 0) return;
    await commitBatches(spec, st, handedBack);
    const rows = handedBack.reduce((n, b) => n + b.main + b.failed + b.dropped, 0);
    const left = handedBack.reduce((n, b) => n + (b.unfinished ?? 0), 0);
    st.messages.push(`Cancelling: committed the ${rows} row(s) the batches in flight finished (${left} left for --resume)`);
  });
}
