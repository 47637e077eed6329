import { cacheDir, type TemporalAddress } from '../temporal/connection.js';
import { createReverifyWorker } from '../temporal/worker.js';
import { trace } from './trace.js';

/** A worker running in this process (of `reverify run` or `reverify cancel`) until `stop()`. */
export interface InProcessWorker {
  /** Shuts the worker down, waits for it to end, and closes its connection and activity deps (once; later calls wait for it). */
  stop(): Promise<void>;
}

/** A worker made (connected, its workflow bundle loaded) but not yet polling. */
export interface ReadyWorker extends InProcessWorker {
  /** Starts polling the run's task queue. */
  start(): InProcessWorker;
}

/**
 * Makes a worker on the run's task queue in this process; `start()` it once the run exists (so
 * that making it, the slow part, overlaps the client's checks), or `stop()` it unstarted.
 */
export async function createInProcessWorker(target: TemporalAddress): Promise<ReadyWorker> {
  const worker = await createReverifyWorker({ address: target.address, namespace: target.namespace, cacheDir: cacheDir() });
  trace('worker made');
  let running: Promise<void> | null = null;
  let stopped: Promise<void> | null = null;
  const handle: ReadyWorker = {
    start() {
      running ??= worker.worker.run();
      return handle;
    },
    stop() {
      stopped ??= (async () => {
        // The SDK releases a worker's connection and workflow threads only when its run() ends: an
        // unstarted worker (the run failed before it was needed) is started and shut down at once.
        running ??= worker.worker.run();
        if (worker.worker.getState() === 'RUNNING') worker.worker.shutdown();
        await running.catch(() => undefined);
        await worker.close();
      })();
      return stopped;
    },
  };
  return handle;
}

/** Starts a worker on the run's task queue in this process. */
export async function startInProcessWorker(target: TemporalAddress): Promise<InProcessWorker> {
  return (await createInProcessWorker(target)).start();
}
