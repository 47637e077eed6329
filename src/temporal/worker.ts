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
    // Let a batch that is writing its part file finish on Ctrl-C instead of being cut.
    shutdownGraceTime: '5s',
  });
  return {
    worker,
    async close() {
      await deps.close();
      await connection.close();
    },
  };
}
