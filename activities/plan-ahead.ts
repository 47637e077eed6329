/**
 * A plan made ahead by `reverify run`, in its own process, on a thread of its own, while the command
 * checks and starts the run and its in-process worker starts (the plan activity otherwise comes
 * only after the worker's first workflow task): the plan activity of the run, when it runs in the
 * same process with exactly the same request, takes the finished plan over instead of planning
 * again. The plan is made in a private temporary directory (never the run's work directory, which a
 * worker of another process may be planning into), and taken over only if every file it read is
 * still the same file (`sameStamp`); anything else (another request, a changed file, bad input
 * found ahead) and the activity plans as before, with its own messages and errors.
 */
import { mkdtemp, copyFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { writeFileAtomic } from '../src/io/atomic-file.js';
import { sameStamp } from '../src/contract/file-stamp.js';
import { fileNow } from '../src/io/file-identity.js';
import { startThread } from '../src/io/start-thread.js';
import { attemptsPathOf } from '../src/planning/plan-attempts.js';
import { freshWorkDir, type PlanOutcome, type PlanRequest } from './plan-run/plan-into.js';

interface Ahead {
  /** The request as the activity will receive it (JSON: what Temporal's payloads keep). */
  request: string;
  dir: Promise<string>;
  outcome: Promise<PlanOutcome | null>;
  /** Stops the thread if it is still planning (its outcome is then null). */
  stop: () => void;
}

/** Plans made ahead in this process, by the work directory of the run they are for. */
const aheads = new Map<string, Ahead>();

/**
 * Starts planning `req` ahead, on a thread of its own (plan-ahead-thread.ts: the command's main
 * thread goes on checking and starting the run meanwhile); at most one per work directory.
 */
export function planAhead(req: PlanRequest): void {
  if (aheads.has(req.workDir)) return;
  let thread: Worker | null = null;
  let stopped = false;
  const dir = mkdtemp(join(tmpdir(), 'reverify-plan-ahead-'));
  const outcome = dir
    .then(
      (workDir) =>
        new Promise<PlanOutcome | null>((resolve) => {
          if (stopped) return resolve(null);
          thread = startThread(import.meta.url, 'plan-ahead-thread', { workerData: { ...req, workDir }, stdout: true, stderr: true });
          thread.unref();
          thread.once('message', (planned: PlanOutcome | null) => resolve(planned));
          thread.once('error', () => resolve(null));
          thread.once('exit', () => resolve(null));
        }),
    )
    .catch(() => null);
  const stop = () => {
    stopped = true;
    void thread?.terminate();
  };
  aheads.set(req.workDir, { request: JSON.stringify(req), dir, outcome, stop });
}

/**
 * The plan made ahead for exactly `req`, moved into `req.workDir` (emptied first, as planning does),
 * or null. Ends the plan made ahead for that work directory either way.
 */
export async function takePlanAhead(req: PlanRequest): Promise<PlanOutcome | null> {
  const ahead = aheads.get(req.workDir);
  if (ahead === undefined) return null;
  aheads.delete(req.workDir);
  try {
    const outcome = await ahead.outcome;
    if (outcome === null || outcome.files === undefined || ahead.request !== JSON.stringify(req)) return null;
    for (const f of outcome.files) if (!sameStamp(f, await fileNow(f.path))) return null;
    await freshWorkDir(req.workDir);
    const planPath = join(req.workDir, 'plan.bin');
    const attemptsPath = attemptsPathOf(planPath);
    await copyFile(outcome.attemptsPath!, attemptsPath);
    await copyFile(outcome.planPath, planPath);
    const { messages: _messages, ...summary } = outcome;
    await writeFileAtomic(join(req.workDir, 'plan.json'), JSON.stringify({ ...summary, planPath, attemptsPath }));
    return { ...outcome, planPath, attemptsPath };
  } finally {
    await removeAhead(ahead);
  }
}

/** Resolves once the plan made ahead for `workDir`, if any, has finished (or failed). */
export async function plannedAhead(workDir: string): Promise<void> {
  await aheads.get(workDir)?.outcome;
}

/** Drops every plan made ahead that no activity took (stopping one still planning). */
export async function dropPlansAhead(): Promise<void> {
  const all = [...aheads.values()];
  aheads.clear();
  all.forEach((ahead) => ahead.stop());
  await Promise.all(all.map(removeAhead));
}

async function removeAhead(ahead: Ahead): Promise<void> {
  await ahead.outcome;
  const dir = await ahead.dir.catch(() => null);
  if (dir !== null) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}
