/**
 * How `reverify run` reports a run that did not end with everything done: the rows are complete
 * but the aggregate metrics could not be computed (exit 2: a line with what the server answered,
 * a line with the command that computes them later), or an operator cancelled it (exit 4: one line).
 */
import { resolve } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import type { RunResult } from '../contract/run-spec.js';

/** `s` as one POSIX shell word: single-quoted, a `'` inside written `'\''`. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A glob of `reverify aggregate -i` that matches exactly `path`: `*`, `?` and `[` as `[*]`, `[?]`, `[[]`. */
export function globLiteral(path: string): string {
  return path.replace(/[*?[]/g, (c) => `[${c}]`);
}

/** A `--server NAME=URL` value with a user and password in the URL shown as `USER:PASSWORD` (never printed). */
function withoutPassword(server: string): string {
  return server.replace(/^([^=]*=[A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#@]*@/, '$1USER:PASSWORD@');
}

/**
 * The command that computes a run's aggregate metrics later, from its main output alone: the rows
 * are read, not rewritten (`--no-merge`), and the metrics go to the run's own
 * `<stem>_aggregate_metrics.json`. Routing is the run's own `--config` files (absolute) and
 * `--server` flags (a password in a URL is shown as `USER:PASSWORD`, to fill in).
 */
export function aggregateCommandLine(output: string, configs: readonly string[], servers: readonly string[]): string {
  return [
    'reverify aggregate',
    `-i ${shellQuote(globLiteral(output))}`,
    `-o ${shellQuote(output)}`,
    '--no-merge',
    ...configs.map((c) => `--config ${shellQuote(resolve(c))}`),
    ...servers.map((s) => `--server ${shellQuote(withoutPassword(s))}`),
  ].join(' ');
}

/**
 * The rows are committed and complete, but `/aggregate_metrics` cannot succeed: the run failed
 * (exit 2). Two lines: what the server answered and that the outputs are complete; the command.
 */
export class MetricsMissingError extends Error {
  override readonly name = 'MetricsMissingError';

  constructor(result: RunResult, command: string) {
    super(
      `Error: the rows are complete but the aggregate metrics could not be computed: ${result.aggregationError}; ` +
        `'${result.outputs.output}' and '${result.outputs.sidecar}' are complete.\n` +
        `Compute the metrics later (once the server is fixed) with: ${command}`,
    );
  }
}

/** The run was cancelled (`reverify cancel`, or the Temporal UI) (exit 4). */
export class RunCancelledError extends Error {
  override readonly name = 'RunCancelledError';

  constructor(outputPath: string) {
    super(
      `Cancelled: the run writing '${outputPath}' was cancelled; the rows it committed are kept in its output and sidecar. ` +
        'To continue, run the same command with --resume.',
    );
  }
}

/** True when waiting for a run's result failed because the run was cancelled. */
export function isCancelledRun(err: unknown): boolean {
  return err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure;
}
