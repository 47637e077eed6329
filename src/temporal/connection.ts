import { Connection, Client } from '@temporalio/client';
import { TASK_QUEUE } from '../../workflows/definitions.js';
import { ensureDevServer, recordedDevServerAddress, workflowUiUrl } from './dev-server/index.js';
import { TemporalUnreachable, unreachableReason } from './server-unreachable.js';
import { stateDir } from './state-dir.js';

/** Where the Temporal server is and how to reach its UI. */
export interface TemporalTarget {
  address: string;
  namespace: string;
  /** Base URL of the Web UI, if known. */
  uiUrl: string | null;
  /** True when this is the embedded dev server (in the state directory). */
  embedded: boolean;
  /** Whether this call started the embedded server (false: it was already running). */
  started: boolean;
}

/**
 * `TEMPORAL_ADDRESS` (and `TEMPORAL_NAMESPACE`, `TEMPORAL_UI_URL`) name an existing cluster;
 * without it, the embedded dev server in the state directory is started or reused.
 */
export async function resolveTemporal(env: NodeJS.ProcessEnv = process.env): Promise<TemporalTarget> {
  const namespace = env.TEMPORAL_NAMESPACE || 'default';
  if (env.TEMPORAL_ADDRESS) {
    return { address: env.TEMPORAL_ADDRESS, namespace, uiUrl: env.TEMPORAL_UI_URL || null, embedded: false, started: false };
  }
  const server = await ensureDevServer({ namespace });
  return { address: server.address, namespace, uiUrl: server.uiUrl, embedded: true, started: server.started };
}

/** The address and namespace of a Temporal server. */
export type TemporalAddress = Pick<TemporalTarget, 'address' | 'namespace'>;

/**
 * The server `resolveTemporal` will most likely return, known before it answers: the embedded dev
 * server recorded in the state directory. Null when `TEMPORAL_ADDRESS` is set (resolveTemporal
 * returns it at once) or no live server is recorded.
 */
export function likelyTemporal(env: NodeJS.ProcessEnv = process.env): TemporalAddress | null {
  if (env.TEMPORAL_ADDRESS) return null;
  const address = recordedDevServerAddress();
  return address === null ? null : { address, namespace: env.TEMPORAL_NAMESPACE || 'default' };
}

/**
 * gRPC options of every client connection: replies up to 128 MiB. A page of history holds up to
 * 1,000 events (the server's default), and a batch's result carries its paired units, so a page of a
 * 10^5-row run came to 4.7 MB, past gRPC's 4 MiB default: the history file and the report were not
 * written. The SDK means to raise it, but under the key `max_receive_message_length`, which gRPC does
 * not read (its key is prefixed `grpc.`).
 */
export const CLIENT_CHANNEL_ARGS = { 'grpc.max_receive_message_length': 128 * 1024 * 1024 } as const;

export async function connectClient(target: TemporalTarget): Promise<{ client: Client; close: () => Promise<void> }> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ address: target.address, channelArgs: CLIENT_CHANNEL_ARGS });
  } catch (err) {
    const reason = unreachableReason(err);
    throw reason === null ? err : new TemporalUnreachable(target.address, reason, null);
  }
  return { client: new Client({ connection, namespace: target.namespace }), close: () => connection.close() };
}

/** Link to a run's page in the Web UI, or null when the UI is unknown. */
export function runUiUrl(target: TemporalTarget, workflowId: string): string | null {
  return target.uiUrl ? workflowUiUrl(target.uiUrl, target.namespace, workflowId) : null;
}

/** Where the CLI keeps caches (the workflow bundle) — the state directory. */
export function cacheDir(): string {
  return stateDir();
}

/** The task queue of runs and workers: `REVERIFY_TASK_QUEUE`, default `reverify`. */
export function taskQueue(env: NodeJS.ProcessEnv = process.env): string {
  return env.REVERIFY_TASK_QUEUE || TASK_QUEUE;
}
