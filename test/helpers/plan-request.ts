/** A run's files in a test directory and the plan phase's request over them (plan-run, plan-round tests). */
import { join } from 'node:path';
import type { PlanRequest } from '../../activities/plan-run/plan-into.js';
import type { RoutingTable } from '../../src/config/routing.js';

/** Two agents, each on its own resources server. */
export const TWO_AGENTS: RoutingTable = {
  agents: { agent_a: 'rs_a', agent_b: 'rs_b' },
  catchAll: null,
  servers: { rs_a: 'http://a', rs_b: 'http://b' },
  taskSources: [],
};

/** Where a run's files are in `dir` (nothing is written). */
export function runFilePaths(dir: string) {
  return {
    inputs: join(dir, 'inputs.jsonl'),
    rollouts: join(dir, 'rollouts.jsonl'),
    output: join(dir, 'out.jsonl'),
    sidecar: join(dir, 'out_failures.jsonl'),
  };
}

export type RunFilePaths = ReturnType<typeof runFilePaths>;

/** A first run's plan of `files` into `workDir` (routing `TWO_AGENTS`, cap 3), with `over` in place. */
export function planRequestOf(files: RunFilePaths, workDir: string, over: Partial<PlanRequest>): PlanRequest {
  return {
    inputsPath: files.inputs,
    rolloutsPath: files.rollouts,
    workDir,
    routing: TWO_AGENTS,
    limit: null,
    judgeFailedOnly: false,
    resume: false,
    outputs: { output: files.output, sidecar: files.sidecar },
    outputsCleared: false,
    maxAttempts: 3,
    repairTruncated: false,
    ...over,
  };
}
