/**
 * The run lock held by the `reverify run` that drives a run (src/io/run-lock.ts `holdRunLock`), as
 * NeMo Gym's controller holds it: from before the workflow starts (once the output checks have
 * passed) until the run has ended, its last commit and its coverage file written. A command that
 * attaches to a live run takes it too. Where the output's name is not known before the run
 * (ATIF inputs, whose refusals write nothing, and `--force` without the guard's answer), it is
 * taken when the run opens its outputs. Ctrl-C, or the command's death, drops it with the command;
 * the run's steps still take it one by one on the workers that go on (docs/operating.md).
 */
import type { RunSpec } from '../contract/run-spec.js';
import { holdRunLock, RunLockHeldError, type RunHold } from '../io/run-lock.js';
import { outputPathsFor } from '../contract/output-paths.js';

/** The main output a fresh run writes, when known before it starts (after `precheckRun`); null otherwise. */
export function outputBeforeStart(spec: RunSpec): string | null {
  if (spec.atif || (spec.force && !spec.guarded && !spec.judgeFailedOnly)) return null;
  return outputPathsFor(spec.outputPath, spec.guarded?.prefix ?? '').output;
}

export class DriverHold {
  private hold: RunHold | null = null;
  private taking: Promise<void> | null = null;

  /** Before the workflow starts: throws `RunLockHeldError` (NeMo Gym's line) if another tool holds it. */
  async take(output: string): Promise<void> {
    this.hold = await holdRunLock(output);
  }

  /**
   * Once the run is live (attached, or its outputs open): a lock held by another tool is one line,
   * not an error; the run's own steps refuse to write beside it.
   */
  takeLate(output: string, out: (line: string) => void): void {
    if (this.hold || this.taking) return;
    this.taking = holdRunLock(output).then(
      (hold) => void (this.hold = hold),
      (err: Error) => {
        if (err instanceof RunLockHeldError)
          out(
            `Warning: ${err.message.replace(/\. Wait.*$/, '')}: this command does not hold the run lock; the run's steps refuse to write beside it`,
          );
        else out(`Warning: the run lock was not taken (${err.message.split('\n')[0]}); the run's steps take it one by one`);
      },
    );
  }

  async release(): Promise<void> {
    await this.taking;
    await this.hold?.release();
    this.hold = null;
  }
}
