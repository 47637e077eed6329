import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities, createActivityDeps } from '../../activities/index.js';
import { taskQueue } from './connection.js';
import { workflowBundlePath } from './workflow-bundle.js';

export interface WorkerOptions {
  address: string;
  namespace: string;
  /** Where the workflow bundle is cached. */
  cacheDir: string;
  taskQueue?: string;
  /** Batch activities this worker runs at once. */
  maxConcurrentActivities?: number;
}

/** A worker for reverify runs with its own HTTP pools; `close()` after `run()` resolves. */
export async function createReverifyWorker(opts: WorkerOptions): Promise<{ worker: Worker; close(): Promise<void> }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  const deps = createActivityDeps();
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue ?? taskQueue(),
    workflowBundle: { codePath: await workflowBundlePath(opts.cacheDir) },
    activities: createActivities(deps),
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivities ?? 64,
    // On shutdown (Ctrl-C, SIGTERM) running batches are cancelled at once: each hands back its
    // checkpoint and fails as `WorkerShutdown`, so the next worker resumes it within seconds
    // (activities/verify-batch.ts). Short activities ignore the cancellation and finish.
    shutdownGraceTime: 0,
    // A batch's checkpoint reaches the server every 2 s (not 0.8 × the heartbeat timeout): the CLI
    // counts the rows answered inside running batches from it (src/cli/live-batches.ts).
    maxHeartbeatThrottleInterval: '2s',
  });
  return {
    worker,
    async close() {
      await deps.close();
      await connection.close();
    },
  };
}
