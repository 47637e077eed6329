import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { inject } from 'vitest';

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

/** A fresh temporary directory. */
export function tempDir(prefix = 'reverify-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
