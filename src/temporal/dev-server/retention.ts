/**
 * How long the embedded server keeps a finished run: the namespace's workflow execution retention.
 * `start-dev` creates its namespaces with 1 day and has no flag for it, so reverify sets it on the
 * namespace it uses each time it starts or reuses the server (one DescribeNamespace; an update only
 * when it differs). Default 30 days, `REVERIFY_RETENTION_DAYS` to change it. A finished run's
 * history is also written beside its outputs (src/cli/run-history-file.ts), so the audit outlives it.
 */
import { Connection } from '@temporalio/client';
import { msToTs, tsToMs } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { ConfigError } from '../../contract/errors.js';
import { HOST, POLL_MS } from './defaults.js';
import { grpcCode } from './health.js';
import { sleep } from './sleep.js';

export const DEFAULT_RETENTION_DAYS = 30;
export const RETENTION_ENV = 'REVERIFY_RETENTION_DAYS';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The retention in days: the option, else `$REVERIFY_RETENTION_DAYS`, else 30; a whole number >= 1. */
export function retentionDays(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  if (option !== undefined) return option;
  const raw = env[RETENTION_ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_RETENTION_DAYS;
  if (!/^\s*[1-9]\d*\s*$/.test(raw))
    throw new ConfigError(`${RETENTION_ENV} must be a whole number of days >= 1, got '${raw}': fix or unset it`);
  return Number(raw);
}

/**
 * Sets the namespace's retention to `days` unless it already is. A namespace registered a moment
 * ago may not be known to the update yet (NOT_FOUND while the server's namespace cache refreshes):
 * tried again until `deadline`.
 */
export async function ensureRetention(port: number, namespace: string, days: number, deadline: number): Promise<void> {
  const connection = await Connection.connect({ address: `${HOST}:${port}`, connectTimeout: 5_000 });
  try {
    for (;;) {
      try {
        await keepRetention(connection, namespace, days, await connection.workflowService.describeNamespace({ namespace }));
        return;
      } catch (err) {
        if (grpcCode(err) !== 5 /* NOT_FOUND */ || Date.now() >= deadline) throw err;
        await sleep(POLL_MS);
      }
    }
  } finally {
    await connection.close();
  }
}

/** Sets the retention of a namespace just described to `days`, unless it already is. */
export async function keepRetention(
  connection: Connection,
  namespace: string,
  days: number,
  described: temporal.api.workflowservice.v1.IDescribeNamespaceResponse,
): Promise<void> {
  const ttl = described.config?.workflowExecutionRetentionTtl;
  if (ttl && tsToMs(ttl) === days * DAY_MS) return;
  await connection.workflowService.updateNamespace({
    namespace,
    config: { workflowExecutionRetentionTtl: msToTs(days * DAY_MS) },
  });
}
