import { WorkflowFailedError, type Client } from '@temporalio/client';
import { FailureType } from '../contract/failure-types.js';
import { rootFailure } from './exit-codes.js';

/**
 * Activities that write nothing the user owns: a run that failed having run only these (a bad line
 * found while planning, an ATIF refusal) left its files as they were. (`planRun` and `planAtif`
 * write the plan into the run's work directory, which the failing run removes.)
 */
const WRITES_NOTHING: ReadonlySet<string> = new Set([
  'guardReverifyModes',
  'checkOutputs',
  'planRun',
  'planAtif',
  'atifPreflight',
  'discardPlan',
  'removeWorkDir',
]);

/**
 * A run that failed on a user error (a bad input, config or file change, a file-system error such
 * as a name too long), which no retry fixes.
 */
export function isUserError(err: unknown): boolean {
  if (!(err instanceof WorkflowFailedError)) return false;
  const type = rootFailure(err).type;
  return type === FailureType.Config || type === FailureType.InputChanged || type === FailureType.FileSystem;
}

/**
 * Removes a run this command started that failed on a user error before writing anything: the
 * user gets the error's one line and the server keeps nothing (issue 10: user errors never leave
 * a run behind). A run that wrote anything stays, with its history, for --resume and the audit.
 * Returns whether it was removed.
 */
export async function removeRunWithoutEffect(client: Client, workflowId: string): Promise<boolean> {
  const handle = client.workflow.getHandle(workflowId);
  const history = await handle.fetchHistory().catch(() => null);
  if (history === null) return false;
  const ran = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
  if (!ran.every((name) => WRITES_NOTHING.has(name))) return false;
  const namespace = client.options.namespace;
  // The server deletes it in the background (seconds; longer when its task queues are busy). A
  // request the server did not take (a busy or restarting server) is asked again, twice.
  for (let attempt = 1; ; attempt++) {
    try {
      await client.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId } });
      return true;
    } catch {
      if (attempt === 3) return false;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
