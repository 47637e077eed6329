import { cacheDir, type TemporalTarget } from '../temporal/connection.js';
import { createReverifyWorker } from '../temporal/worker.js';

/** A worker running in this process (of `reverify run` or `reverify cancel`) until `stop()`. */
export interface InProcessWorker {
  /** Shuts the worker down, waits for it to end, and closes its connection and activity deps (once; later calls wait for it). */
  stop(): Promise<void>;
}

/** Starts a worker on the run's task queue in this process. */
export async function startInProcessWorker(target: TemporalTarget): Promise<InProcessWorker> {
  const worker = await createReverifyWorker({ address: target.address, namespace: target.namespace, cacheDir: cacheDir() });
  const running = worker.worker.run();
  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= (async () => {
        if (worker.worker.getState() === 'RUNNING') worker.worker.shutdown();
        await running.catch(() => undefined);
        await worker.close();
      })();
      return stopped;
    },
  };
}
