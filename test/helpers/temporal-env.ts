import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { inject } from 'vitest';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
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

/** Whether the server holds a run (live or closed) writing `output`. */
export function runExists(client: Client, output: string): Promise<boolean> {
  return client.workflow
    .getHandle(workflowIdForOutput(output))
    .describe()
    .then(
      () => true,
      () => false,
    );
}

/** Whether the run writing `output` is gone within `timeoutMs` (a deleted run goes in the background). */
export async function runGone(client: Client, output: string, timeoutMs = 90_000): Promise<boolean> {
  for (const t0 = Date.now(); Date.now() - t0 < timeoutMs; await new Promise((r) => setTimeout(r, 250)))
    if (!(await runExists(client, output))) return true;
  return false;
}
