import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { inject } from 'vitest';
import { openForFile } from './hooks.js';

export { tempDir } from './temp-dirs.js';

let runtimeInstalled = false;

/**
 * Points this test file's process at the shared dev server of globalSetup, with a task queue of
 * its own (so parallel files never run each other's work) and a shared bundle cache.
 */
export function useSharedTemporal(name: string): { address: string; namespace: string; taskQueue: string; env: Record<string, string> } {
  const address = inject('temporalAddress');
  const namespace = inject('temporalNamespace');
  const taskQueue = `reverify-test-${name}-${process.pid}`;
  const env = {
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: namespace,
    TEMPORAL_UI_URL: inject('temporalUiUrl'),
    REVERIFY_TASK_QUEUE: taskQueue,
    REVERIFY_STATE_DIR: join(tmpdir(), 'reverify-test-state'),
  };
  Object.assign(process.env, env);
  if (!runtimeInstalled) {
    // In-process workers log expected activity failures at WARN; tests assert on them instead.
    Runtime.install({ logger: new DefaultLogger('ERROR'), shutdownSignals: [] });
    runtimeInstalled = true;
  }
  return { address, namespace, taskQueue, env };
}

/** A Temporal client of the shared dev server (see `useSharedTemporal`), connected in `beforeAll` and closed in `afterAll`. */
export function useTemporalClient(temporal: { address: string; namespace: string }): () => Client {
  return openForFile(
    async () => new Client({ connection: await Connection.connect({ address: temporal.address }), namespace: temporal.namespace }),
    (client) => client.connection.close(),
  );
}
