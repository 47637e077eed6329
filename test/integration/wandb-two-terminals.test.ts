/**
 * One W&B run per run, however many terminals follow it: two terminals start the same command at
 * once (the resources server holds their `GET /reverify_mode` until both have asked, so one starts
 * the run and the other attaches, as in two-terminals.test.ts), with the wandb_* keys in their
 * --config and W&B offline (WANDB_MODE=offline, one WANDB_DIR). The workflow logs the run to W&B in
 * one activity: exactly one offline run is written, read back with W&B's own records, and both
 * terminals print the same `Uploaded to W&B` line.
 */
import { appendFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { keysOf, readRows } from '../helpers/run-fixtures.js';
import { heldUntil, startScriptedServer } from '../helpers/scripted-server.js';
import { tasks, writeAgentsConfig, writeFixture } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { offlineRuns, wandbSkipReason } from '../helpers/wandb-offline.js';

const temporal = useSharedTemporal('wandb-two-terminals');
const server = closedAfterEach(startScriptedServer);

describe('W&B with two terminals on one run', () => {
  // A part `npm run setup:test` installs: missing, the test fails with what to run (never skipped).
  beforeAll(() => {
    const skip = wandbSkipReason();
    if (skip !== null) throw new Error(skip);
  });

  it('the run is logged to W&B once; both terminals say where', async () => {
    const rs = await server({ mode: heldUntil(2) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3]) });
    const config = writeAgentsConfig(f.dir, { agent_a: { server: 'rs', url: rs.url } });
    appendFileSync(config, 'wandb_project: proj\nwandb_name: once\nwandb_api_key: wandbkey-0123456789abcdef0123456789abcdef01\n');
    const wandbDir = tempDir('reverify-wandb-');
    const env = { ...temporal.env, WANDB_MODE: 'offline', WANDB_DIR: wandbDir };
    const args = ['run', '--inputs', f.inputs, '--rollouts', f.rollouts, '-o', f.output, '--config', config];
    const [a, b] = await Promise.all([runCli(args, env, 180_000), runCli(args, env, 180_000)]);
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    expect([a, b].filter((r) => r.stdout.includes(`Attached to the live run for ${f.output}`))).toHaveLength(1);
    expect(keysOf(readRows(f.output)).sort()).toEqual(['0:0', '1:0', '2:0', '3:0']);

    const runs = offlineRuns(wandbDir);
    expect(runs).toHaveLength(1);
    expect(runs[0].run).toMatchObject({ project: 'proj', display_name: 'once' });
    const said = [a, b].map((r) => r.stdout.split('\n').filter((l) => l.startsWith('Uploaded to W&B')));
    const line = `Uploaded to W&B: project proj, run ${runs[0].run.run_id} (4 rollouts in the Rollouts table, `;
    for (const lines of said) expect(lines).toEqual([expect.stringContaining(line)]);
  }, 240_000);
});
