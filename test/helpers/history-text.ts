/** A run's history as searchable text: its events as JSON, with every payload also decoded to text. */
import type { Client } from '@temporalio/client';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';

/** `json` (events, or a `<stem>_history.json` text) with each base64 payload also decoded. */
export function withDecodedPayloads(json: string): string {
  return (
    json + json.replace(/"data":"([A-Za-z0-9+/=]*)"/g, (_m, b64: string) => JSON.stringify(Buffer.from(b64, 'base64').toString('utf8')))
  );
}

/** The history of the run of `output`, fetched from the server, as `withDecodedPayloads` text. */
export async function historyTextOf(client: Client, output: string): Promise<string> {
  return withDecodedPayloads(JSON.stringify(await client.workflow.getHandle(workflowIdForOutput(output)).fetchHistory()));
}
