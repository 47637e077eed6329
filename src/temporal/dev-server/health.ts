/** Is the frontend answering (TCP, then DescribeNamespace); registering a namespace it lacks. */
import { createConnection } from 'node:net';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { ConfigError } from '../../contract/errors.js';
import { HOST, POLL_MS } from './defaults.js';
import { sleep } from './sleep.js';

export type Health = 'ok' | 'no-namespace' | 'down';

/** What a probe may do with the namespace once it is described, on the same connection. */
export type WhenUp = (connection: Connection, described: temporal.api.workflowservice.v1.IDescribeNamespaceResponse) => Promise<void>;

/**
 * Is a Temporal frontend answering on 127.0.0.1:port? 'no-namespace' when it answers but the
 * namespace does not exist. A plain TCP check first keeps the poll cheap while nothing listens.
 * `whenUp` runs once the namespace is described (it failing makes the server 'down').
 */
export async function probe(port: number, namespace: string, timeoutMs: number, whenUp?: WhenUp): Promise<Health> {
  if (!(await tcpOpen(port, Math.min(timeoutMs, 1_000)))) return 'down';
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address: `${HOST}:${port}`, connectTimeout: timeoutMs });
    const conn = connection;
    const described = await conn.withDeadline(Date.now() + timeoutMs, () => conn.workflowService.describeNamespace({ namespace }));
    await whenUp?.(conn, described);
    return 'ok';
  } catch (err) {
    return grpcCode(err) === 5 /* NOT_FOUND */ ? 'no-namespace' : 'down';
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

export async function ensureNamespace(port: number, namespace: string, deadline: number): Promise<void> {
  if (namespace === 'default') return;
  let registered = false;
  for (;;) {
    const health = await probe(port, namespace, 3_000);
    if (health === 'ok') return;
    if (health === 'no-namespace' && !registered) {
      const connection = await Connection.connect({ address: `${HOST}:${port}`, connectTimeout: 5_000 });
      try {
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: msToTs('1 day'), // as start-dev's own namespaces
        });
      } catch (err) {
        if (grpcCode(err) !== 6 /* ALREADY_EXISTS */) throw err;
      } finally {
        await connection.close();
      }
      registered = true;
    }
    if (Date.now() >= deadline) {
      throw new ConfigError(
        `namespace '${namespace}' is not available on the Temporal dev server at ${HOST}:${port}: check the server log, or use the default namespace`,
      );
    }
    await sleep(POLL_MS);
  }
}

export function grpcCode(err: unknown): number | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e !== null && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function tcpOpen(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = createConnection({ port, host: HOST });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolvePromise(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function waitForPort(port: number, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (await tcpOpen(port, 500)) return;
    await sleep(POLL_MS);
  }
}
