import { aggregateRun } from './aggregate-run.js';
import { atifPreflight } from './atif-preflight.js';
import { discardPlan } from './discard-plan.js';
import { planAtif } from './plan-atif.js';
import { guardReverifyModes } from './guard-reverify-modes.js';
import { lendLanes } from './lend-lanes.js';
import { commitBatches } from './commit-batches.js';
import { countPairedUnits } from './count-paired-units.js';
import type { ActivityDeps } from './deps.js';
import { planRound } from './plan-round.js';
import { planSelected } from './plan-selected.js';
import { noiseAgreement } from './noise-agreement.js';
import { settleSavedRows } from './settle-saved-rows.js';
import { planRun } from './plan-run.js';
import { checkOutputs } from './check-outputs.js';
import { moveInvalidJudgeRows } from './move-invalid-judge-rows.js';
import { openOutputs } from './open-outputs.js';
import { recordUnstartedRows } from './record-unstarted.js';
import { removeWorkDir } from './remove-work-dir.js';
import { seedSuccesses } from './seed-successes.js';
import { uploadOpen, uploadRolloutsTable, uploadRunMetrics, uploadWandbRun } from './upload-results.js';
import { verifyBatch } from './verify-batch.js';
import { writeCoverage } from './write-coverage.js';
import { failFastOnFsError } from './user-errors.js';

/**
 * All activities of a reverify run. Those that talk to a verifier are bound to this process's
 * dependencies (shared HTTP pools); the others inject nothing and are plain named functions. A
 * file-system error that retrying cannot fix fails any of them at once (`failFastOnFsError`).
 */
export function createActivities(deps: ActivityDeps) {
  return failFastOnFsErrors({
    guardReverifyModes: guardReverifyModes(deps),
    checkOutputs,
    moveInvalidJudgeRows,
    planRun,
    countPairedUnits,
    planAtif,
    atifPreflight: atifPreflight(deps),
    discardPlan,
    openOutputs,
    seedSuccesses,
    planRound,
    planSelected,
    noiseAgreement,
    settleSavedRows,
    verifyBatch: verifyBatch(deps),
    lendLanes: lendLanes(deps),
    commitBatches,
    aggregateRun: aggregateRun(deps),
    removeWorkDir,
    recordUnstartedRows,
    uploadOpen,
    uploadRolloutsTable,
    uploadRunMetrics,
    uploadWandbRun,
    writeCoverage,
  });
}

/** Every activity of `activities`, its file-system errors that retrying cannot fix made terminal (user-errors.ts). */
function failFastOnFsErrors<T extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: T): T {
  return Object.fromEntries(Object.entries(activities).map(([name, fn]) => [name, failFastOnFsError(fn)])) as T;
}

export type ReverifyActivities = ReturnType<typeof createActivities>;
export { createActivityDeps, type ActivityDeps } from './deps.js';
// What a process that hosts a worker (src/temporal/worker.ts, the one door from src/ into activities/)
// needs besides the activities: the plan made ahead for its worker, and how long a cancelled batch drains.
export { dropPlansAhead, planAhead } from './plan-ahead.js';
export { CANCEL_GRACE_MS } from './verify-batch.js';
