import { mkdir, open, rm } from 'node:fs/promises';
import { unstartedPath } from '../src/contract/file-names.js';
import { deletedExistingOutput } from '../src/contract/messages.js';
import type { OutputPaths } from '../src/contract/run-spec.js';
import { countRows } from '../src/io/count-rows.js';
import { exists } from '../src/io/file-exists.js';
import { withRunLock } from '../src/io/run-lock.js';
import { endWithWholeLine } from '../src/io/whole-line-tail.js';
import type { OutputRules } from '../src/contract/output-rules.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

/**
 * Prepare phase, second half: with --overwrite (and neither --resume nor --append) delete the old
 * output and sidecar, then create both (spec §1.6: both always exist after a run) and the work
 * directory. Returns the current lengths, from which the workflow starts recording commits, and the
 * rows already in the main output (the run's coverage counts them as scored). Holds the run lock.
 */
export function openOutputs(
  paths: OutputPaths,
  rules: OutputRules,
): Promise<{ mainLength: number; sidecarLength: number; mainRows: number; messages: string[] }> {
  return failFastOnUserError(() =>
    whileHeartbeating(() =>
      withRunLock(paths.output, async () => {
        const messages: string[] = [];
        if (rules.overwrite && !rules.resume && !rules.append) {
          for (const p of [paths.output, paths.sidecar]) {
            if (await exists(p)) {
              await rm(p);
              messages.push(deletedExistingOutput(p));
            }
          }
        }
        const lengths: number[] = [];
        for (const p of [paths.output, paths.sidecar]) {
          if (await exists(p)) {
            const repaired = await endWithWholeLine(p, rules.repairTruncated ?? false);
            if (repaired) messages.push(repaired);
          }
          const fh = await open(p, 'a');
          lengths.push((await fh.stat()).size);
          await fh.close();
        }
        await mkdir(paths.workDir, { recursive: true });
        // The evidence of an earlier ending (src/planning/unstarted-rows.ts): this run plans those rollouts again.
        await rm(unstartedPath(paths.output), { force: true });
        const mainRows = lengths[0] > 0 ? await countRows(paths.output, lengths[0]) : 0;
        return { mainLength: lengths[0], sidecarLength: lengths[1], mainRows, messages };
      }),
    ),
  );
}
