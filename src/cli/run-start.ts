/**
 * The start of `reverify run`: the checks before the workflow starts, then the start itself, or
 * the attach to the run already live for this output (a second terminal says so).
 */
import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { RunSpec } from '../contract/run-spec.js';
import type { RunOptions } from '../config/run-options.js';
import { taskQueue } from '../temporal/connection.js';
import { outputSearchAttributes } from '../temporal/search-attributes.js';
import type { reverifyRun } from '../../workflows/reverify-run.js';
import { differingOptionsLine, liveRunSpec } from './attach-options.js';
import { withAttemptCap } from './attempt-cap.js';
import { withSavedOrder } from './saved-order.js';
import { precheckRun } from './precheck.js';
import type { RunCommandIo, RunProcessOptions } from './run-command.js';
import { RunLockHeldError } from '../io/run-lock.js';
import { outputBeforeStart, type DriverHold } from './run-hold.js';

/** How long a run lock held by another terminal is given to become a live run this command attaches to. */
const LOCK_HOLDER_START_MS = 10_000;
import { staticDetailsOf } from './static-details.js';

/** True when this output's run is live (the command attaches to it). */
function isLive(client: Client, workflowId: string): Promise<boolean> {
  return client.workflow
    .getHandle(workflowId)
    .describe()
    .then((d) => d.status.name === 'RUNNING')
    .catch(() => false);
}

/** The spec after the checks made before the workflow starts (precheck.ts) and the attempt cap of a reused output. */
async function prechecked(spec: RunSpec, opts: RunOptions, proc: RunProcessOptions, io: RunCommandIo): Promise<RunSpec> {
  const capped = await withAttemptCap(await precheckRun(spec, { worker: proc.worker }), opts, process.env);
  capped.notices.forEach((line) => io.out(line));
  return withSavedOrder(capped.spec, opts);
}

/**
 * Starts the workflow for this output, or gives the handle of the one already running (`existing`).
 * Another terminal may start the same run between the describe and this start: `FAIL` says so
 * (USE_EXISTING would hand back the same handle without telling), and this command attaches.
 */
export async function startRun(
  client: Client,
  workflowId: string,
  spec: RunSpec,
): Promise<{ handle: WorkflowHandle<typeof reverifyRun>; existing: boolean }> {
  try {
    const handle = await client.workflow.start<typeof reverifyRun>('reverifyRun', {
      workflowId,
      taskQueue: taskQueue(),
      args: [spec],
      workflowIdConflictPolicy: 'FAIL',
      staticSummary: `reverify ${spec.outputPath}`,
      staticDetails: staticDetailsOf(spec.outputPath),
      // Shown in the UI's list and `describe()`; no registration needed (a search attribute would be).
      // `startsOutput`: this run writes the output anew (not --resume, --append, recovery): the output's
      // chain of invocations starts here (src/temporal/run-history.ts).
      memo: { output: spec.outputPath, inputs: spec.inputsPath, rollouts: spec.rolloutsPath, startsOutput: startsOutput(spec) },
      typedSearchAttributes: await outputSearchAttributes(client, spec.outputPath),
    });
    return { handle, existing: false };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    return { handle: client.workflow.getHandle(workflowId), existing: true };
  }
}

/** Whether a run writes its output anew: the first of the output's invocations (an earlier one wrote a file since replaced). */
function startsOutput(spec: RunSpec): boolean {
  return !spec.resume && !spec.append && !spec.judgeFailedOnly;
}

/**
 * Says the command attached to the live run, and which of its own options the live run does not
 * have; returns the options in force (the live run's own).
 */
export async function sayAttached(
  handle: WorkflowHandle<typeof reverifyRun>,
  spec: RunSpec,
  workflowId: string,
  io: RunCommandIo,
): Promise<RunSpec> {
  io.out(`Attached to the live run for ${spec.outputPath} (workflow ${workflowId}); its own options apply.`);
  const own = await liveRunSpec(handle);
  const differ = own && differingOptionsLine(spec, own);
  if (differ) io.out(differ);
  return own ?? spec;
}

/** The spec after the checks, unless the run is live: then null (this command attaches). Takes the run lock (run-hold.ts). */
export async function checkedUnlessLive(
  client: Client,
  workflowId: string,
  spec: RunSpec,
  opts: RunOptions,
  proc: RunProcessOptions,
  io: RunCommandIo,
  hold: DriverHold,
): Promise<RunSpec | null> {
  if (await isLive(client, workflowId)) return null;
  try {
    const checked = await prechecked(spec, opts, proc, io);
    // Held from here until the run has ended; an output named only by the run: when it opens.
    const output = outputBeforeStart(checked);
    if (output !== null) await hold.take(output);
    return checked;
  } catch (err) {
    // Refused because another terminal's run, started meanwhile, holds the output: attach to it.
    // That terminal holds the run lock from its checks until its run ends, and starts the workflow
    // just after its checks: a lock held by a run about to start is waited for a moment.
    if (await isLive(client, workflowId)) return null;
    if (err instanceof RunLockHeldError && (await becomesLive(client, workflowId))) return null;
    throw err;
  }
}

/** Whether this output's run goes live within a few seconds (another terminal starting it). */
async function becomesLive(client: Client, workflowId: string): Promise<boolean> {
  for (let waited = 0; waited < LOCK_HOLDER_START_MS; waited += 250) {
    await new Promise((r) => setTimeout(r, 250));
    if (await isLive(client, workflowId)) return true;
  }
  return false;
}
