/**
 * Issue 29 item 8: two terminals start the same command at the same moment. Both look for a live
 * run before either starts one (the resources server holds their `GET /reverify_mode`, asked
 * between that look and the start, until both have asked): one starts the run, the other says it
 * attached to it; both follow it to the same end, and every key is written once.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { keysOf, readRows } from '../helpers/run-fixtures.js';
import { heldUntil, startScriptedServer } from '../helpers/scripted-server.js';
import { tasks, writeFixture } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('two-terminals');
const server = closedAfterEach(startScriptedServer);

describe('two terminals, one command', () => {
  it('started at once: one says `Started run`, the other `Attached to the live run`; each key written once', async () => {
    const rs = await server({ mode: heldUntil(2) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4, 5]) });
    const args = ['run', '--inputs', f.inputs, '--rollouts', f.rollouts, '-o', f.output, '--server', rs.flag('rs')];
    const [a, b] = await Promise.all([runCli(args, temporal.env), runCli(args, temporal.env)]);
    const said = [a, b].map((r) => ({
      started: r.stdout.includes('Started run '),
      attached: r.stdout.includes(`Attached to the live run for ${f.output}`),
    }));
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    expect(said.filter((s) => s.started && !s.attached)).toHaveLength(1);
    expect(said.filter((s) => s.attached && !s.started)).toHaveLength(1);
    expect(rs.modeRequests).toBe(2);
    expect(keysOf(readRows(f.output)).sort()).toEqual(['0:0', '1:0', '2:0', '3:0', '4:0', '5:0']);
  });
});
