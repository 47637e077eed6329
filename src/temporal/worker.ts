import { setFlagsFromString } from 'node:v8';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities, createActivityDeps } from '../../activities/index.js';
import { CHECKPOINT_THROTTLE_MS } from '../contract/checkpoint-interval.js';
import { taskQueue } from './connection.js';
import { workflowBundlePath } from './workflow-bundle.js';

// The one module of src/ that imports activities/ (eslint.config.js): a worker runs them, and the
// command that hosts one plans ahead for it (src/cli/plan-ahead-start.ts) and says how its batches drain.
export { CANCEL_GRACE_MS, dropPlansAhead, planAhead } from '../../activities/index.js';

export interface WorkerOptions {
  address: string;
  namespace: string;
  /** Where the workflow bundle is cached. */
  cacheDir: string;
  taskQueue?: string;
  /** Batch activities this worker runs at once. */
  maxConcurrentActivities?: number;
}

/**
 * The young generation of the workflow threads' V8 heaps, in MiB per semi-space (V8's default
 * grows it to 16). A workflow activation allocates little, so a small one costs no measurable CPU
 * and saves the process ~25 MiB of RSS (bench/startup.ts, 20,000 rows). V8 reads the flag when
 * an isolate is made: it applies to the threads `Worker.create` starts, not to this thread's heap.
 */
const WORKFLOW_SEMI_SPACE_MB = 4;

/** A worker for reverify runs with its own HTTP pools; `close()` after `run()` resolves. */
export async function createReverifyWorker(opts: WorkerOptions): Promise<{ worker: Worker; close(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  const deps = createActivityDeps();
  setFlagsFromString(`--max-semi-space-size=${WORKFLOW_SEMI_SPACE_MB}`);
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue ?? taskQueue(),
      workflowBundle: { codePath: await workflowBundlePath(opts.cacheDir) },
      activities: createActivities(deps),
      maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? 64,
      // On shutdown (Ctrl-C, SIGTERM) running batches are cancelled at once: each returns held with
      // its checkpoint (not a failure), and the workflow launches it again for the next worker, which
      // goes on from there (activities/verify-batch.ts). Short activities ignore the cancellation and finish.
      shutdownGraceTime: 0,
      // A batch's checkpoint reaches the server every 2 s (not 0.8 × the heartbeat timeout): the CLI
      // counts the rows answered inside running batches from it (src/cli/live-batches.ts).
      maxHeartbeatThrottleInterval: CHECKPOINT_THROTTLE_MS,
    });
  } catch (err) {
    // Not made (the namespace missing, the server gone): its pools and connection are released.
    await deps.close();
    await connection.close();
    throw err;
  }
  return {
    worker,
    async close() {
      await deps.close();
      await connection.close();
    },
  };
}
