import { makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { QuietLogger } from '../temporal/quiet-logger.js';

/**
 * Installs Temporal's runtime once, before any connection. A worker process shuts down cleanly on
 * SIGINT/SIGTERM; a `run` handles them itself (interrupt.ts: its worker stops gracefully, the run waits for one).
 */
export function installRuntime(workerOwnsSignals: boolean): void {
  // A `run` reports failures itself in one line; its in-process worker only logs errors.
  // `REVERIFY_LOG_LEVEL` (TRACE, DEBUG, INFO, WARN, ERROR) overrides.
  const level = (process.env.REVERIFY_LOG_LEVEL as 'WARN' | undefined) ?? (workerOwnsSignals ? 'WARN' : 'ERROR');
  Runtime.install({
    logger: new QuietLogger(level),
    // The SDK core logs on its own (WARN by default): at the same level, so a lost Temporal server is
    // one line of ours (exit-codes.ts), not pages of gRPC retries.
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: level, other: level }) } },
    shutdownSignals: workerOwnsSignals ? ['SIGINT', 'SIGTERM'] : [],
  });
}
