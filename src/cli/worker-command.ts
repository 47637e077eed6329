import { cacheDir, resolveTemporal, taskQueue } from '../temporal/connection.js';
import { createReverifyWorker } from '../temporal/worker.js';
import { parseServerAuth, SERVER_AUTH_ENV } from '../verifier/credentials.js';

/**
 * `reverify worker`: polls the task queue and runs workflow and batch activities until SIGINT/SIGTERM.
 * Start as many as you like, on any machine that sees the same input and output paths.
 */
export async function workerCommand(opts: { maxConcurrentActivities: number }): Promise<void> {
  // A malformed REVERIFY_SERVER_AUTH stops the worker now, not at its first request.
  const credentials = parseServerAuth(process.env[SERVER_AUTH_ENV] ?? '');
  const target = await resolveTemporal();
  const w = await createReverifyWorker({
    address: target.address,
    namespace: target.namespace,
    cacheDir: cacheDir(),
    maxConcurrentActivities: opts.maxConcurrentActivities,
  });
  const auth = credentials.size > 0 ? `; credentials from ${SERVER_AUTH_ENV} for ${[...credentials.keys()].join(', ')}` : '';
  console.log(`reverify worker polling task queue '${taskQueue()}' on ${target.address} (namespace ${target.namespace})${auth}`);
  try {
    const running = w.worker.run();
    // Started by `reverify run --workers` (local-workers.ts), with an IPC channel to it: this worker
    // ends when that command does, however it ends (the channel closes even when it is killed).
    if (process.send !== undefined) {
      process.channel?.unref();
      const commandGone = () => {
        if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
      };
      if (process.connected) process.once('disconnect', commandGone);
      else commandGone();
    }
    await running;
  } finally {
    await w.close();
  }
}
