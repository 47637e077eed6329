import { cacheDir, resolveTemporal, taskQueue } from '../temporal/connection.js';
import { createReverifyWorker } from '../temporal/worker.js';

/**
 * `reverify worker`: polls the task queue and runs workflow and batch activities until SIGINT/SIGTERM.
 * Start as many as you like, on any machine that sees the same input and output paths.
 */
export async function workerCommand(opts: { maxConcurrentActivities: number }): Promise<void> {
  const target = await resolveTemporal();
  const w = await createReverifyWorker({
    address: target.address,
    namespace: target.namespace,
    cacheDir: cacheDir(),
    maxConcurrentActivities: opts.maxConcurrentActivities,
  });
  console.log(`reverify worker polling task queue '${taskQueue()}' on ${target.address} (namespace ${target.namespace})`);
  try {
    await w.worker.run();
  } finally {
    await w.close();
  }
}
