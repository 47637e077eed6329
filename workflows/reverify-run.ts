/**
 * The reverify run as one durable workflow (DESIGN.md "The run as a workflow"), read as its
 * phases: guard, prepare, (recovery:) move invalid-judge rows, plan, open, coverage, seed; verify and commit in rounds,
 * re-judging failures as they are committed; aggregate, coverage and finish (coverage also when the run fails or is cancelled). Deterministic: no I/O, no clocks, no randomness; rows never enter the
 * history, only counts, paths and committed lengths. The phases live in their own modules; the
 * state and its arithmetic in run-state.ts; the activity proxies in activity-proxies.ts.
 */
import { CancellationScope, ContinueAsNew, setHandler } from '@temporalio/workflow';
import type { RunResult, RunSpec } from '../src/contract/run-spec.js';
import { endCancelled } from './cancel.js';
import { coverageAtOpen, coverageOnFailure } from './coverage.js';
import { showDetails } from './details.js';
import { progressQuery, setConcurrencyUpdate, setMaxRequestsUpdate, setPausedUpdate } from './definitions.js';
import { atifFirstPhases } from './atif-phases.js';
import { asRunFailure } from './failures.js';
import { finish } from './finish.js';
import { announce, guard, moveInvalidJudgeRows, openOutputs, plan, planEstimate, prepare, seed } from './first-phases.js';
import { noiseSample } from './noise-sample.js';
import { rejudgeSaved } from './rejudge-saved.js';
import { progressOf } from './progress.js';
import { initialState, upgradeState, type InFlight, type RunState } from './run-state.js';
import { verifyRound } from './verify-round.js';
import { recordStoppedEarly } from './stop-rules.js';

export type { RunState } from './run-state.js';

export async function reverifyRun(spec: RunSpec, carried?: RunState): Promise<RunResult> {
  const st = carried ? upgradeState(carried) : initialState(spec);
  // The request budget (budget.ts): carried across continue-as-new, set by the spec only at the start.
  if (!carried && typeof spec.maxRequests === 'number') st.maxRequests = spec.maxRequests;
  const inflight = new Map<number, InFlight>();
  setHandlers(st, inflight);
  showDetails(st);
  try {
    if (!carried && spec.atif) {
      const { outputs, plan, messages } = await atifFirstPhases(spec, st);
      await openOutputs(spec, st, outputs);
      await coverageAtOpen(spec, st);
      announce(st, plan, messages);
    } else if (!carried) {
      const prefix = await guard(spec, st);
      const outputs = await prepare(spec, st, prefix);
      await moveInvalidJudgeRows(spec, st);
      const planned = await plan(spec, st, outputs);
      await openOutputs(spec, st, outputs);
      await coverageAtOpen(spec, st);
      await seed(spec, st, outputs, planned.plan);
      await rejudgeSaved(spec, st);
      await planEstimate(spec, st, planned.plan);
      announce(st, planned.plan, planned.messages);
    }
    await verifyRound(spec, st, inflight);
    await recordStoppedEarly(st);
    await noiseSample(spec, st);
    return await finish(spec, st);
  } catch (err) {
    // Not an end: the next generation goes on (and writes the coverage file when the run ends).
    if (err instanceof ContinueAsNew) throw err;
    // Cancelled (`reverify cancel`): end cleanly.
    // The coverage file is written last, once the outputs are cut back (cancel) or as they are (failure).
    if (CancellationScope.current().consideredCancelled) {
      const cancelled = await endCancelled(st, inflight, err);
      await coverageOnFailure(spec, st, 'cancelled');
      throw cancelled;
    }
    await coverageOnFailure(spec, st, 'failed');
    throw asRunFailure(err);
  }
}

/** The progress query and the operator's updates (`reverify control`): concurrency ceiling, pause, request budget. */
function setHandlers(st: RunState, inflight: Map<number, InFlight>): void {
  setHandler(progressQuery, () => progressOf(st, inflight));
  setHandler(
    setConcurrencyUpdate,
    (n: number) => {
      st.concurrency = n;
      st.effective = Math.min(st.effective, n);
      st.messages.push(`Concurrency ceiling set to ${n} by an operator`);
      showDetails(st, inflight);
      return n;
    },
    {
      validator: (n: number) => {
        if (!Number.isInteger(n) || n < 1) throw new Error('concurrency must be an integer >= 1');
      },
    },
  );
  setHandler(setPausedUpdate, (paused: boolean) => {
    if (paused !== st.paused)
      st.messages.push(paused ? 'Paused by an operator: batches in flight finish, no new one starts' : 'Resumed by an operator');
    st.paused = paused;
    showDetails(st, inflight);
    return paused;
  });
  setHandler(
    setMaxRequestsUpdate,
    (n: number) => {
      st.maxRequests = n;
      st.messages.push(`Request budget set to ${n} by an operator (${st.requestsUsed} /verify requests made so far)`);
      showDetails(st, inflight);
      return n;
    },
    {
      validator: (n: number) => {
        if (!Number.isInteger(n) || n < 1) throw new Error('max-requests must be an integer >= 1');
      },
    },
  );
}
