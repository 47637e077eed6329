import { aggregateRun } from './aggregate-run.js';
import { guardReverifyModes } from './guard-reverify-modes.js';
import { commitBatches } from './commit-batches.js';
import type { ActivityDeps } from './deps.js';
import { planRound } from './plan-round.js';
import { planRun } from './plan-run.js';
import { checkOutputs } from './check-outputs.js';
import { openOutputs } from './open-outputs.js';
import { removeWorkDir } from './remove-work-dir.js';
import { seedSuccesses } from './seed-successes.js';
import { verifyBatch } from './verify-batch.js';

/** All activities of a reverify run, bound to this process's dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    guardReverifyModes: guardReverifyModes(deps),
    checkOutputs: checkOutputs(),
    planRun: planRun(),
    openOutputs: openOutputs(),
    seedSuccesses: seedSuccesses(),
    planRound: planRound(),
    verifyBatch: verifyBatch(deps),
    commitBatches: commitBatches(),
    aggregateRun: aggregateRun(deps),
    removeWorkDir: removeWorkDir(),
  };
}

export type ReverifyActivities = ReturnType<typeof createActivities>;
export { createActivityDeps, type ActivityDeps } from './deps.js';
