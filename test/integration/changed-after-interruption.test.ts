/**
 * Issue 34 item 2: a run killed mid-way, an input changed while it was down, the same command run
 * again (it attaches). The plan proves each file by its stamp (size, times to the nanosecond,
 * inode: src/contract/file-stamp.ts) and each row by a 64-bit digest of SHA-256
 * (src/io/line-digest.ts): a not-yet-verified line replaced by another key's line of the same
 * length and the same CRC-32, or the file merely rewritten with the same bytes, stops the re-run
 * with exit 1 before it sends a single `/verify` request; `--resume` then plans again and finishes.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { forgeCrc32 } from '../helpers/forge-crc32.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { readRows, runInProcess } from '../helpers/run-fixtures.js';
import { echo, emptyMetrics, startScriptedServer, type Reply, type Row } from '../helpers/scripted-server.js';
import { inputLine, lines, successLine, writeLines, type RowSpec } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('changed-after-interruption');
const server = closedAfterEach(startScriptedServer);

/** Keys t:r for t in [100, 100 + tasks) and r in {0, 1}. */
const pairs = (tasks: number): RowSpec[] => Array.from({ length: tasks * 2 }, (_, i) => ({ t: 100 + (i >> 1), r: i & 1 }));
/** Padding after each rollout line (JSON whitespace), as files written by other tools may carry: room to forge in. */
const PAD = ' '.repeat(48);

/** A server that echoes each row's response, and holds every request after the first `open` until `release()`. */
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

function fixture(tasks: number) {
  const dir = tempDir();
  const f = { inputs: `${dir}/inputs.jsonl`, rollouts: `${dir}/rollouts.jsonl`, output: `${dir}/out.jsonl` };
  writeLines(
    f.inputs,
    pairs(tasks).map((s) => inputLine(s)),
  );
  writeLines(
    f.rollouts,
    pairs(tasks).map((s) => successLine(s) + PAD),
  );
  return f;
}

type Files = ReturnType<typeof fixture>;
const flags = (url: string) => ({ servers: [`rs=${url}`], batchSize: 50, concurrency: 2, maxAttempts: 1 });

/** `reverify run` in a process of its own, killed (SIGKILL) once the server holds a request: the run waits, planned, for a worker. */
async function killedMidRun(f: Files, url: string, heldNow: Promise<void>): Promise<void> {
  const args = ['run', '--inputs', f.inputs, '--rollouts', f.rollouts, '-o', f.output, '--server', `rs=${url}`];
  const child = spawn(
    process.execPath,
    [reverifyBin, ...args, '--batch-size', '50', '--concurrency', '2', '--max-attempts', '1', '--heartbeat-timeout', '2'],
    {
      env: { ...process.env, ...temporal.env },
      stdio: 'ignore',
    },
  );
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await Promise.race([heldNow, exited]);
  expect(child.exitCode).toBeNull(); // still running: killed below, mid-run
  child.kill('SIGKILL');
  await exited;
}

/** Each output row's response is its own key's (`resp_<t>_<r>`), never another row's. */
function expectOwnResponses(path: string): void {
  for (const row of readRows(path)) {
    expect((row.response as { id: string }).id).toBe(`resp_${row._ng_task_index}_${row._ng_rollout_index}`);
  }
}

describe('an input changed between an interruption and the re-run', () => {
  it("a not-yet-verified line replaced by another key's line of the same length and CRC-32: refused before any request", async () => {
    const f = fixture(150);
    const { s, release, heldNow } = await gatedServer(100);
    await killedMidRun(f, s.url, heldNow);
    // Line 281 (key 240:0) is in the last batch, which has not started: forge it from line 282 (key 240:1).
    const ls = readFileSync(f.rollouts, 'utf8').split('\n');
    const original = Buffer.from(ls[280]);
    const forged = forgeCrc32(Buffer.from(ls[281].trimEnd()), original.length, crc32(original));
    expect(crc32(forged)).toBe(crc32(original));
    ls[280] = forged.toString('utf8');
    writeFileSync(f.rollouts, ls.join('\n')); // in place: same inode, same size
    release();
    const sent = s.verifyBodies.length;

    const again = await runInProcess({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, ...flags(s.url) });
    expect(again.error?.code).toBe(1);
    expect(again.error?.line).toContain(`'${f.rollouts}' changed after this run planned it (`);
    expect(again.error?.line).toContain('run the same command with --resume');
    expect(s.verifyBodies.length).toBe(sent); // not one request
    expectOwnResponses(f.output);
  });

  it('the rollouts or the inputs rewritten in place with the same bytes: refused before any request; --resume finishes', async () => {
    for (const which of ['rollouts', 'inputs'] as const) {
      const f = fixture(100);
      const { s, release, heldNow } = await gatedServer(60);
      await killedMidRun(f, s.url, heldNow);
      writeFileSync(f[which], readFileSync(f[which]));
      release();
      const sent = s.verifyBodies.length;

      const again = await runInProcess({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, ...flags(s.url) });
      expect(again.error?.code).toBe(1);
      expect(again.error?.line).toMatch(
        new RegExp(
          `^Error: '${f[which]}' changed after this run planned it \\((modified [-0-9T:.]+Z -> |written to in place at )[-0-9T:.]+Z\\): no row of it is read`,
        ),
      );
      expect(s.verifyBodies.length).toBe(sent);
      const committed = lines(f.output);

      const resumed = await runInProcess({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, ...flags(s.url), resume: true });
      expect(resumed.error).toBeNull();
      expect(lines(f.output).slice(0, committed.length)).toEqual(committed);
      expect(readRows(f.output)).toHaveLength(200);
      expectOwnResponses(f.output);
    }
  });
});
