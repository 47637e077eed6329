import type { Client } from '@temporalio/client';
import { connectClient, likelyTemporal, resolveTemporal, type TemporalAddress, type TemporalTarget } from '../temporal/connection.js';
import { dropPlansAhead } from '../temporal/worker.js';
import { createInProcessWorker, type ReadyWorker } from './in-process-worker.js';
import { trace } from './trace.js';

const sameServer = (a: TemporalAddress, b: TemporalAddress) => a.address === b.address && a.namespace === b.namespace;

/**
 * The in-process worker, made (its connection, its workflow thread, the workflow bundle: the
 * slowest part of a start) from the moment the server is likely known (`likelyTemporal`: the live
 * dev server the state directory records), so it is made while that server is checked, not after.
 * Kept when the checked server is that one; otherwise, or when it could not be made there (the
 * namespace not yet registered, say), stopped and made again on the checked server. Rejects when
 * the server cannot be resolved (an early worker is then stopped in the background).
 */
async function makeWorker(likely: TemporalAddress | null, resolved: Promise<TemporalTarget>): Promise<ReadyWorker> {
  const early = likely === null ? null : createInProcessWorker(likely);
  early?.catch(() => undefined);
  const target = await resolved.catch((err: unknown) => {
    // Released in the background: the command ends with the error, and waits for no connection.
    void early?.then((w) => w.stop()).catch(() => undefined);
    throw err;
  });
  const made = await early?.catch(() => null);
  if (made && likely !== null && sameServer(likely, target)) return made;
  await made?.stop();
  return createInProcessWorker(target);
}

/**
 * The server, the client and (unless --no-worker) the in-process worker, made while the plan is
 * made ahead. The worker is made while the client connects, checks and starts the run (it is needed
 * as soon as the run starts); it polls nothing until it is started.
 */
export async function connectRun(
  worker: boolean,
): Promise<{ target: TemporalTarget; client: Client; close: () => Promise<void>; workerReady: Promise<ReadyWorker> | null }> {
  const resolved = resolveTemporal();
  resolved.catch(() => undefined);
  const workerReady = worker ? makeWorker(likelyTemporal(), resolved) : null;
  workerReady?.catch(() => undefined);
  const target = await resolved.catch(async (err: unknown) => {
    await workerReady?.catch(() => null);
    await dropPlansAhead();
    throw err;
  });
  trace('temporal resolved');
  const { client, close } = await connectClient(target).catch(async (err: unknown) => {
    await (await workerReady?.catch(() => null))?.stop();
    await dropPlansAhead();
    throw err;
  });
  trace('client connected');
  return { target, client, close, workerReady };
}
