import type { WorkflowHandle } from '@temporalio/client';
import type { Progress } from '../contract/run-spec.js';
import { progressQuery } from '../../workflows/definitions.js';

/**
 * The run's progress, or null if no worker answers within `timeoutMs`. A query goes to the worker
 * that has the workflow cached; when that worker has just died, the query would wait for the
 * server's own timeouts, so it is bounded here and simply asked again later.
 */
export async function queryProgress(handle: WorkflowHandle, timeoutMs = 3000): Promise<Progress | null> {
  try {
    return await handle.client.withDeadline(Date.now() + timeoutMs, () => handle.query(progressQuery));
  } catch {
    return null;
  }
}
