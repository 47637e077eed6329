import { rm } from 'node:fs/promises';
import { withRunLock } from '../src/io/run-lock.js';
import { commitParts } from '../src/io/committer.js';
import type { OutputPaths } from '../src/contract/run-spec.js';
import { whileHeartbeating } from './heartbeating.js';
import { failFastOnUserError } from './user-errors.js';

export interface CommitRequest {
  outputs: Pick<OutputPaths, 'output' | 'sidecar'>;
  /** Lengths after the last commit the workflow recorded. */
  mainLength: number;
  sidecarLength: number;
  /** Part files to append, in this order. */
  mainParts: string[];
  sidecarParts: string[];
  /** Files of batches whose commit the workflow has recorded: safe to delete now. */
  obsolete: string[];
  /** The run's main output, whose run lock is held, when `outputs.output` is another file of the run (the noise file). */
  lockOf?: string;
}

/**
 * Commit phase: append finished batches to the main output and the sidecar exactly once
 * (truncate to the recorded length, append, fsync) and return the new lengths for the workflow to
 * record. Parts are deleted only one commit later, once the workflow has recorded this one, so a
 * retried commit always finds them. Holds the run lock (src/io/run-lock.ts).
 */
export function commitBatches(req: CommitRequest): Promise<{ mainLength: number; sidecarLength: number }> {
  return failFastOnUserError(() =>
    whileHeartbeating(() =>
      withRunLock(req.lockOf ?? req.outputs.output, async () => {
        await Promise.all(req.obsolete.map((p) => rm(p, { force: true })));
        const mainLength = await commitParts(req.outputs.output, req.mainLength, req.mainParts);
        const sidecarLength = await commitParts(req.outputs.sidecar, req.sidecarLength, req.sidecarParts);
        return { mainLength, sidecarLength };
      }),
    ),
  );
}
