/**
 * The continue-as-new chain of a workflow: every run from the first to the last, with its history
 * length and size.
 */
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { CLIENT_CHANNEL_ARGS } from '../../src/temporal/connection.js';

export interface ChainRun {
  runId: string;
  status: string;
  historyLength: number;
  /** Bytes (the server reports it; undefined on very old servers). */
  historySize: number | undefined;
}

/**
 * Walks the chain of `workflowId` from its first run: the last event of each run that continued
 * as new is `WorkflowExecutionContinuedAsNew`, whose `newExecutionRunId` is the next run.
 */
export async function continueAsNewChain(address: string, namespace: string, workflowId: string): Promise<ChainRun[]> {
  const connection = await Connection.connect({ address, channelArgs: CLIENT_CHANNEL_ARGS });
  try {
    const client = new Client({ connection, namespace });
    const latest = await client.workflow.getHandle(workflowId).describe();
    let runId: string | undefined = latest.raw.workflowExecutionInfo?.firstRunId || (await firstRunByListing(client, workflowId));
    const chain: ChainRun[] = [];
    while (runId) {
      const handle: WorkflowHandle = client.workflow.getHandle(workflowId, runId);
      const d = await handle.describe();
      chain.push({ runId, status: d.status.name, historyLength: d.historyLength, historySize: d.historySize });
      const history = await handle.fetchHistory();
      const next: string | null | undefined = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
      runId = next ?? undefined;
      if (chain.length > 100_000) throw new Error('continue-as-new chain does not end');
    }
    return chain;
  } finally {
    await connection.close();
  }
}

/** The earliest run of `workflowId` by visibility listing (servers that do not report firstRunId). */
async function firstRunByListing(client: Client, workflowId: string): Promise<string> {
  let first: { runId: string; startTime: Date } | undefined;
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowId.replace(/'/g, "\\'")}'` })) {
    if (!first || wf.startTime < first.startTime) first = { runId: wf.runId, startTime: wf.startTime };
  }
  if (!first) throw new Error(`no run of workflow ${workflowId} is listed`);
  return first.runId;
}
