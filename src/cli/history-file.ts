/**
 * When a run has ended, `reverify run` writes its full workflow history beside its outputs
 * (`<stem>_history.json`, src/temporal/run-history.ts): after a completed run, and after a failed
 * or cancelled one whose outputs exist. Not after a user error (nothing was written, and nothing
 * is) nor when the server is gone. Writing it never changes how the command ends: a failure to
 * write is one line saying so.
 */
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { historyPath } from '../contract/file-names.js';
import type { RunSpec } from '../contract/run-spec.js';
import { exists } from '../io/file-exists.js';
import { writeRunHistory } from '../temporal/run-history.js';
import { outputPathsFor } from '../contract/output-paths.js';
import { describeFailure, EXIT_CANCELLED, EXIT_RUN_FAILED } from './exit-codes.js';

/** Writes the history beside `output`; says where, or why it could not. */
export async function writeHistoryBeside(client: Client, workflowId: string, output: string, out: (line: string) => void): Promise<void> {
  const path = historyPath(output);
  try {
    const { invocations, runs, events } = await writeRunHistory(client, workflowId, path);
    const of = invocations === 1 ? 'of the chain' : `of ${invocations} invocations`;
    out(`Workflow history: ${path} (${events} events in ${runs} run${runs === 1 ? '' : 's'} ${of})`);
  } catch (err) {
    out(
      `Could not write the workflow history to ${path}: ${(err as Error).message}; \`reverify history -o ${output} --json\` reads it while the server keeps the run`,
    );
  }
}

/** After a run that failed (exit 2) or was cancelled (exit 4) with its outputs on disk. */
export async function writeHistoryAfterFailure(
  client: Client,
  workflowId: string,
  spec: RunSpec,
  err: unknown,
  out: (line: string) => void,
): Promise<void> {
  // Only the run's own end (a run that completed was written already, its metrics missing or not).
  if (!(err instanceof WorkflowFailedError)) return;
  const code = describeFailure(err).code;
  if (code !== EXIT_RUN_FAILED && code !== EXIT_CANCELLED) return;
  const output = outputPathsFor(spec.outputPath, spec.guarded?.prefix ?? '').output;
  if (await exists(output)) await writeHistoryBeside(client, workflowId, output, out);
}
