/**
 * Whether and what `reverify run` plans ahead (activities/plan-ahead.ts, reached through src/temporal/worker.ts) for the run it starts with
 * its in-process worker, as soon as its spec is built: a fresh run (no --resume: its plan
 * reads the outputs, which the plan ahead would not prove unchanged; no recovery: it may move rows
 * of --rollouts first; no ATIF: another plan), whose output paths are known (without --force the
 * guard never prefixes them), on inputs small enough that the plan is a short part of the start
 * (its sort spills go to the temporary directory). A plan made ahead for a run that then attaches,
 * fails its checks or plans elsewhere is dropped when the command ends.
 */
import { statSync } from 'node:fs';
import { outputPathsFor } from '../contract/output-paths.js';
import { planAhead } from '../temporal/worker.js';
import type { RunSpec } from '../contract/run-spec.js';
import { planRequestFor } from '../../workflows/plan-request.js';

/** Inputs and rollouts larger than this together are planned by the activity only. */
export const PLAN_AHEAD_MAX_BYTES = 256 << 20;

export function startPlanAhead(spec: RunSpec): void {
  if (spec.atif || spec.judgeFailedOnly || spec.resume || spec.force) return;
  const bytes = statSync(spec.inputsPath, { throwIfNoEntry: false })?.size ?? Infinity;
  const more = statSync(spec.rolloutsPath, { throwIfNoEntry: false })?.size ?? Infinity;
  if (bytes + more > PLAN_AHEAD_MAX_BYTES) return;
  const outputs = outputPathsFor(spec.outputPath, '');
  planAhead(planRequestFor(spec, outputs));
}
