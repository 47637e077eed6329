import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { connectClient, resolveTemporal, runUiUrl } from '../temporal/connection.js';
import { workflowIdForOutput } from '../temporal/workflow-id.js';
import { progressLine } from './progress-view.js';
import { queryProgress } from './query-progress.js';
import { RetryNotices } from './retry-notices.js';

/** `reverify status --output <out.jsonl>`: the state of the run writing that output. */
export async function statusCommand(output: string, out: (line: string) => void): Promise<void> {
  const target = await resolveTemporal();
  const workflowId = workflowIdForOutput(resolve(output));
  const { client, close } = await connectClient(target);
  try {
    const handle = client.workflow.getHandle(workflowId);
    const desc = await handle.describe().catch(() => {
      throw new ConfigError(`no run found for output '${resolve(output)}' (workflow ${workflowId}) on ${target.address}`);
    });
    out(`Run ${workflowId}: ${desc.status.name} (started ${desc.startTime.toISOString()}, ${desc.historyLength} history events)`);
    if (desc.status.name === 'CANCELLED') {
      out(
        'Cancelled: the rows it committed are kept in its output and sidecar; to continue, run the same `reverify run` command with --resume',
      );
    }
    const ui = runUiUrl(target, workflowId);
    if (ui) out(`Temporal UI: ${ui}`);
    const p = desc.status.name === 'RUNNING' ? await queryProgress(handle) : null;
    if (p) {
      out(progressLine(p, 0));
      for (const [agent, c] of Object.entries(p.perAgent)) out(`  ${agent}: ${c.done} ok, ${c.failed} failed, ${c.dropped} not persisted`);
    }
    // Why activities are being retried (a verifier outage), each distinct failure once.
    new RetryNotices().take(desc.raw.pendingActivities ?? [], Date.now()).forEach((line) => out(line));
  } finally {
    await close();
  }
}
