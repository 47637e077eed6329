/**
 * `--order random` (issue 32 item 1): a run killed mid-way (its command SIGKILLed while the server
 * holds a request) and run again (it attaches to the live run, whose plan is the saved
 * permutation) writes every key exactly once; the rows arrive grouped by task, not in file order,
 * and the seed is printed. Then `--resume` of the finished output with another seed plans nothing.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/hooks.js';
import { keysOf, readRows, runInProcess } from '../helpers/run-fixtures.js';
import { echo, emptyMetrics, startScriptedServer, type Reply, type Row } from '../helpers/scripted-server.js';
import { inputLine, successLine, writeLines, type RowSpec } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('random-order');
const server = closedAfterEach(startScriptedServer);

/** 60 tasks × 3 rollouts, in file order task by task. */
const specs: RowSpec[] = Array.from({ length: 180 }, (_, i) => ({ t: Math.floor(i / 3), r: i % 3 }));

/** A server that echoes each row, holding every request after the first `open` until `release()`. */
async function gatedServer(open: number) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held!: () => void;
  const heldNow = new Promise<void>((r) => (held = r));
  let seen = 0;
  const s = await server({
    aggregate: emptyMetrics,
    verify: async (row: Row): Promise<Reply> => {
      if (++seen > open) {
        held();
        await gate;
      }
      return echo(row, { reward: 1.0 });
    },
  });
  return { s, release, heldNow };
}

describe('--order random', () => {
  it('killed mid-way and run again: every key exactly once, grouped by task, in the seed’s order', { timeout: 240_000 }, async () => {
    const dir = tempDir();
    const f = { inputs: `${dir}/inputs.jsonl`, rollouts: `${dir}/rollouts.jsonl`, output: `${dir}/out.jsonl` };
    writeLines(
      f.inputs,
      specs.map((s) => inputLine(s)),
    );
    writeLines(
      f.rollouts,
      specs.map((s) => successLine(s)),
    );
    const { s, release, heldNow } = await gatedServer(70);
    const flags = ['--batch-size', '20', '--concurrency', '2', '--max-attempts', '1', '--heartbeat-timeout', '2'];
    const args = ['run', '--inputs', f.inputs, '--rollouts', f.rollouts, '-o', f.output, '--server', `rs=${s.url}`, ...flags];
    const child = spawn(process.execPath, [reverifyBin, ...args, '--order', 'random', '--seed', '9'], {
      env: { ...process.env, ...temporal.env },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await Promise.race([heldNow, exited]);
    expect(child.exitCode).toBeNull();
    child.kill('SIGKILL');
    await exited;
    release();

    const common = { inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [`rs=${s.url}`], batchSize: 20, concurrency: 2 };
    const again = await runInProcess({ ...common, maxAttempts: 1, order: 'random' });
    expect(again.error).toBeNull();
    expect(again.lines).toContain('Order: random (seed 9)');
    const keys = keysOf(readRows(f.output));
    expect(keys).toHaveLength(180);
    expect(new Set(keys).size).toBe(180);
    // Not the file's order; each batch (20 rows) lists whole tasks' rows together, in file order.
    expect(keys).not.toEqual(specs.map((k) => `${k.t}:${k.r}`));
    const tasksIn = (batch: string[]) => batch.map((k) => Number(k.split(':')[0]));
    const first = tasksIn(keys.slice(0, 20));
    expect(first).not.toEqual([...first].sort((a, b) => a - b));

    const resumed = await runInProcess({ ...common, maxAttempts: 1, order: 'random', orderSeed: 10, resume: true });
    expect(resumed.error).toBeNull();
    expect(resumed.lines).toContain('Order: random (seed 10)');
    expect(keysOf(readRows(f.output))).toEqual(keys);
  });
});
