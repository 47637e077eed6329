/**
 * User errors never start a workflow (issue 10 item 5): `reverify run` checks the resources
 * servers' `GET /reverify_mode` and the output rules before `workflow.start`, so a mistake prints
 * its one line, exits 1, prints no `Started run` line and leaves no workflow for that output in
 * the server. A bad line, found by the plan inside the workflow, is one line too, and the run it
 * started is deleted. Through the in-process command and the real `reverify` process, on the shared
 * dev server and the real reference resources server.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { coveragePath } from '../../src/contract/file-names.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runArgs, runReverify, sampleRun } from '../helpers/run-fixtures.js';
import { runCli } from '../helpers/cli-process.js';
import { runExists, runGone, tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('precheck');
const client = useTemporalClient(temporal);
const reference = closedAfterEach(startReferenceServer);

const workflowExists = (output: string) => runExists(client(), output);

describe('user errors found before the workflow starts', () => {
  it('an existing output without --overwrite: one line, exit 1, no workflow', async () => {
    const rs = await reference({});
    const d = await sampleRun(tempDir(), rs.port, { tasks: 2, repeats: 1 });
    writeFileSync(d.output, '{"old": 1}\n');
    const run = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
    expect(run.error?.code).toBe(1);
    expect(run.error?.line).toMatch(/already exists/);
    expect(run.lines.join('\n')).not.toMatch(/Started run/);
    expect(await workflowExists(d.output)).toBe(false);
  });

  it('a server answering reverify_mode "unsupported" without --force: the spec line, exit 1, no workflow', async () => {
    const rs = await reference({ mode: 'unsupported' });
    const d = await sampleRun(tempDir(), rs.port, { tasks: 2, repeats: 1 });
    const run = await runCli(runArgs(d), temporal.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/pass --force/);
    expect(run.stdout + run.stderr).not.toMatch(/Started run/);
    expect(await workflowExists(d.output)).toBe(false);
  });

  it('an unreachable resources server: one line naming it, exit 1, no workflow', async () => {
    const rs = await reference({});
    const port = rs.port;
    await rs.close();
    const d = await sampleRun(tempDir(), port, { tasks: 2, repeats: 1 });
    const run = await runCli(runArgs(d), temporal.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/resources server 'mcqa_rs' at .* is not reachable/);
    expect(run.stdout + run.stderr).not.toMatch(/Started run/);
    expect(await workflowExists(d.output)).toBe(false);
  });

  it('an output that is a directory: one line, exit 1, no workflow', async () => {
    const rs = await reference({});
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 2, repeats: 1 });
    const run = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: dir, configs: [d.config] });
    expect(run.error?.code).toBe(1);
    expect(run.error?.line).toMatch(/is a directory/);
    expect(run.lines.join('\n')).not.toMatch(/Started run/);
    expect(await workflowExists(dir)).toBe(false);
  });

  it('a bad line found while planning: its one line (file:line), exit 1, no Started line, and no run left in the server', async () => {
    const rs = await reference({});
    const d = await sampleRun(tempDir(), rs.port, { tasks: 3, repeats: 1 });
    const lines = readFileSync(d.rolloutsPath, 'utf8').split('\n');
    lines[1] = '{"_ng_task_index": 1, "_ng_rollout_index": 0, "reward": 1.0,';
    writeFileSync(d.rolloutsPath, lines.join('\n'));
    const run = await runCli(runArgs(d), temporal.env);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Error: .*rollouts\.jsonl:2\b/)]);
    expect(run.stdout).not.toMatch(/Started run/);
    expect(rs.stats().requests.verify).toBe(0);
    // The server deletes the run in the background.
    expect(await runGone(client(), d.output)).toBe(true);
  });

  it('an --output name near 255 bytes: its derived names do not fit; one line, exit 1, nothing written, no workflow', async () => {
    const rs = await reference({});
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 2, repeats: 1 });
    // 250 bytes: the output itself fits NAME_MAX, its work directory, sidecar and metrics file do not.
    const output = join(dir, `${'o'.repeat(244)}.jsonl`);
    const before = readdirSync(dir).sort();
    const run = await runCli(runArgs({ ...d, output }), temporal.env);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^Error: the failures sidecar '.*_failures\.jsonl' would have a name of 259 bytes, over the file system's limit of 255 bytes per name: choose a shorter --output name$/,
      ),
    ]);
    expect(run.stdout).not.toMatch(/Started run/);
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(rs.stats().requests.verify).toBe(0);
    expect(await workflowExists(output)).toBe(false);
  });

  it('a directory where the coverage file goes: one line before the start, exit 1, no workflow (not EISDIR from an activity)', async () => {
    const rs = await reference({});
    const d = await sampleRun(tempDir(), rs.port, { tasks: 2, repeats: 1 });
    mkdirSync(coveragePath(d.output));
    const run = await runCli(runArgs(d), temporal.env);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      `Error: '${coveragePath(d.output)}' (the coverage file of this run) is a directory, not a file: choose another --output`,
    ]);
    expect(rs.stats().requests.verify).toBe(0);
    expect(await workflowExists(d.output)).toBe(false);
  });

  it('a correct run still starts and finishes', async () => {
    const rs = await reference({});
    const d = await sampleRun(tempDir(), rs.port, { tasks: 2, repeats: 1 });
    const run = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
    expect(run.error).toBeNull();
    expect(run.lines.join('\n')).toMatch(/Started run/);
    expect(await workflowExists(d.output)).toBe(true);
  });
});
