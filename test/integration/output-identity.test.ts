/**
 * Issue 35 item 2: one output file is one run, whatever name reaches it. A run live on one name
 * (started with --no-worker, so it waits) and the same command on another name of that file (a
 * symlink to it, a dangling symlink the run creates, a symlinked directory) attach to one
 * workflow: never two writers truncating the file to their own lengths. A hard-linked output has
 * no one name: refused.
 */
import { spawn } from 'node:child_process';
import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { keysOf, readRows, runArgs, runReverify, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('output-identity');
const client = useTemporalClient(temporal);
const rs = useReferenceServer({ port: 0, seed: 7 });

/** `reverify run … --no-worker` on `output`, left running once its workflow is live, then killed: the run waits for a worker. */
async function liveRunWithoutWorker(args: string[], output: string): Promise<void> {
  const child = spawn(process.execPath, [reverifyBin, ...args, '--no-worker'], {
    env: { ...process.env, ...temporal.env },
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const handle = client().workflow.getHandle(workflowIdForOutput(output));
  for (;;) {
    const status = await handle.describe().then(
      (d) => d.status.name,
      () => null,
    );
    if (status === 'RUNNING') break;
    if (child.exitCode !== null) throw new Error(`the --no-worker run exited (${child.exitCode}) before its workflow started`);
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  await exited;
}

/** Runs live on `first` (no worker), then the same command on `second` (a worker, --resume): one workflow, each row once. */
async function expectOneRun(dir: string, first: string, second: string, written: string): Promise<void> {
  const d = await sampleRun(dir, rs().port, { tasks: 6, repeats: 2 });
  await liveRunWithoutWorker([...runArgs({ ...d, output: first }), '--resume'], first);
  const outcome = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: second, configs: [d.config], resume: true });
  expect(outcome.error).toBeNull();
  expect(outcome.lines.join('\n')).toContain('Attached to the live run');
  expect(workflowIdForOutput(second)).toBe(workflowIdForOutput(first));
  const keys = keysOf(readRows(written));
  expect(keys.length).toBe(outcome.result!.done);
  expect(new Set(keys).size).toBe(keys.length);
  expect(keys.length + outcome.result!.failed).toBe(readRows(d.rolloutsPath).length);
}

describe('one output file, two names', () => {
  it('a run live on real.jsonl, then the same command on link.jsonl -> real.jsonl: attached, each row once', async () => {
    const dir = tempDir();
    const real = join(dir, 'real.jsonl');
    const link = join(dir, 'link.jsonl');
    writeFileSync(real, '');
    symlinkSync(real, link);
    await expectOneRun(dir, real, link, real);
  });

  it('a run live on a dangling link.jsonl -> real.jsonl, then on real.jsonl once the run has created it: attached', async () => {
    const dir = tempDir();
    const real = join(dir, 'real.jsonl');
    const link = join(dir, 'link.jsonl');
    symlinkSync(real, link);
    const before = workflowIdForOutput(link);
    await expectOneRun(dir, link, real, real);
    // The id the run started with is the id of the file it created.
    expect(workflowIdForOutput(link)).toBe(before);
  });

  it('a run live on dir1/out.jsonl, then on dir2/out.jsonl with dir2 -> dir1: attached, each row once', async () => {
    const dir = tempDir();
    const dir1 = join(dir, 'dir1');
    const dir2 = join(dir, 'dir2');
    mkdirSync(dir1);
    symlinkSync(dir1, dir2);
    await expectOneRun(dir, join(dir1, 'out.jsonl'), join(dir2, 'out.jsonl'), join(dir1, 'out.jsonl'));
  });

  it('a hard-linked output (one file, two names) is refused: one line, exit 1, the file unchanged', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 2, repeats: 1 });
    const real = join(dir, 'real.jsonl');
    const hard = join(dir, 'hard.jsonl');
    writeFileSync(real, '{"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0}\n');
    linkSync(real, hard);
    const before = readFileSync(real);
    const outcome = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: hard, configs: [d.config], resume: true });
    expect(outcome.error?.code).toBe(1);
    expect(outcome.error?.line).toBe(
      `Error: --output '${hard}' is a file with 2 names (hard links), so two names could be two runs writing it: ` +
        'give it one name (remove its other hard links, or copy it) and run again',
    );
    expect(readFileSync(real).equals(before)).toBe(true);
  });
});
