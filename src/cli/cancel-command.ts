import { startInProcessWorker, type InProcessWorker } from './in-process-worker.js';
import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { connectClient, resolveTemporal } from '../temporal/connection.js';
import { workflowIdForOutput } from '../temporal/workflow-id.js';
import { isCancelledRun } from './run-endings.js';
import { CANCEL_GRACE_MS } from '../temporal/worker.js';

export interface CancelOptions {
  output: string;
  /** Run a worker in this process until the run has ended, so the cancellation is carried out even if no other worker is alive. */
  worker: boolean;
  /** How long to wait for the run to end (default 5 minutes). */
  waitMs?: number;
}

/**
 * `reverify cancel -o out.jsonl`: ends the run writing that output, whatever it waits on (a verifier
 * outage, a failing aggregation). It is a Temporal workflow cancellation, recorded in the run's
 * history: batches in flight are asked to stop (they heartbeat, so they see it) and hand back the rows
 * they finished, which are committed; the work directory is removed, and the run ends CANCELED. The
 * same `reverify run` command with --resume continues the job from the outputs.
 */
export async function cancelCommand(opts: CancelOptions, out: (line: string) => void): Promise<void> {
  const output = resolve(opts.output);
  const target = await resolveTemporal();
  const workflowId = workflowIdForOutput(output);
  const { client, close } = await connectClient(target);
  let worker: InProcessWorker | null = null;
  try {
    const handle = client.workflow.getHandle(workflowId);
    const desc = await handle.describe().catch(() => null);
    if (desc?.status.name !== 'RUNNING') {
      throw new ConfigError(
        `no live run writes '${output}' (workflow ${workflowId}${desc ? `: ${desc.status.name}` : ''}): nothing to cancel`,
      );
    }
    await handle.cancel();
    out(
      `Cancelling the run writing '${output}' (workflow ${workflowId}): batches in flight start no new row, ` +
        `their requests in flight get up to ${CANCEL_GRACE_MS / 1000} s to answer, and what they finished is committed`,
    );
    if (opts.worker) worker = await startInProcessWorker(target);
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      handle.result().then(
        () => 'completed',
        (err: unknown) => (isCancelledRun(err) ? 'cancelled' : 'failed'),
      ),
      new Promise<null>((r) => (timer = setTimeout(() => r(null), opts.waitMs ?? 5 * 60_000))),
    ]).finally(() => clearTimeout(timer));
    if (ended === 'cancelled') {
      out(
        `Cancelled the run writing '${output}': the rows it committed are kept in its output and sidecar; ` +
          'to continue, run the same `reverify run` command with --resume',
      );
    } else if (ended === null) {
      out(
        `The cancellation of ${workflowId} is recorded but the run has not ended yet: it ends when a worker carries it out ` +
          `(\`reverify worker\`, or the same \`reverify run\` command); \`reverify status -o ${output}\` shows when`,
      );
    } else {
      out(`The run writing '${output}' ${ended} before the cancellation took effect: \`reverify status -o ${output}\` shows its end`);
    }
  } finally {
    await worker?.stop();
    await close();
  }
}
