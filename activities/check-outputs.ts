import type { InputFiles, OutputRules } from '../src/contract/output-rules.js';
import type { OutputPaths } from '../src/contract/run-spec.js';
import { checkOutputPaths } from '../src/run-checks/output-checks.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

/**
 * Prepare phase, first half (spec §4.4): the output checks of src/run-checks/output-checks.ts, the
 * same function `reverify run` runs before it starts the workflow, run again here for an attach and
 * for workers that see another file system.
 */
export function checkOutputs(outputPath: string, prefix: string, rules: OutputRules, inputs: InputFiles): Promise<OutputPaths> {
  return failFastOnUserError(() => whileHeartbeating(() => checkOutputPaths(outputPath, prefix, rules, inputs)));
}
