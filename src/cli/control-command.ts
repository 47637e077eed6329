import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { connectClient, resolveTemporal } from '../temporal/connection.js';
import { workflowIdForOutput } from '../temporal/workflow-id.js';
import { setConcurrencyUpdate, setMaxRequestsUpdate, setPausedUpdate } from '../../workflows/definitions.js';

export interface ControlOptions {
  output: string;
  concurrency?: number;
  pause?: boolean;
  unpause?: boolean;
  maxRequests?: number;
}

/**
 * `reverify control -o out.jsonl [--concurrency N] [--pause | --unpause] [--max-requests N]`: changes a live run from
 * any machine that reaches its Temporal server. Each change is a workflow update, so it is recorded
 * in the run's history.
 */
export async function controlCommand(opts: ControlOptions, out: (line: string) => void): Promise<void> {
  if (opts.pause && opts.unpause) throw new ConfigError('pass --pause or --unpause, not both');
  if (opts.concurrency === undefined && !opts.pause && !opts.unpause && opts.maxRequests === undefined) {
    throw new ConfigError('nothing to change: pass --concurrency N, --pause, --unpause or --max-requests N');
  }
  for (const [flag, n] of [
    ['--concurrency', opts.concurrency],
    ['--max-requests', opts.maxRequests],
  ] as const) {
    if (n !== undefined && (!Number.isInteger(n) || n < 1)) throw new ConfigError(`${flag} must be a whole number >= 1, got ${n}`);
  }
  const target = await resolveTemporal();
  const workflowId = workflowIdForOutput(resolve(opts.output));
  const { client, close } = await connectClient(target);
  try {
    const handle = client.workflow.getHandle(workflowId);
    const desc = await handle.describe().catch(() => null);
    if (desc?.status.name !== 'RUNNING') {
      throw new ConfigError(`no live run writes '${resolve(opts.output)}' (workflow ${workflowId}${desc ? `: ${desc.status.name}` : ''})`);
    }
    if (opts.concurrency !== undefined) {
      await handle.executeUpdate(setConcurrencyUpdate, { args: [opts.concurrency] });
      out(`Concurrency ceiling of ${workflowId} set to ${opts.concurrency}`);
    }
    if (opts.maxRequests !== undefined) {
      await handle.executeUpdate(setMaxRequestsUpdate, { args: [opts.maxRequests] });
      out(`Request budget of ${workflowId} set to ${opts.maxRequests} /verify requests`);
    }
    if (opts.pause || opts.unpause) {
      await handle.executeUpdate(setPausedUpdate, { args: [Boolean(opts.pause)] });
      out(`${workflowId} ${opts.pause ? 'paused' : 'resumed'}`);
    }
  } finally {
    await close();
  }
}
