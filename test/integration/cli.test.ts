import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../src/reference-server/server.js';
import { keysOf, readRows, runArgs, sampleRun } from '../helpers/run-fixtures.js';
import { reward, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('cli');

/** Runs the real `reverify` command; resolves with its exit code and output (`onStdout` sees the output as it grows). */
function cli(
  args: string[],
  env: Record<string, string> = temporal.env,
  onStdout: (soFar: string) => void = () => undefined,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [reverifyBin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      onStdout(stdout);
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

let rs: ReferenceServer;
beforeAll(async () => {
  rs = await startReferenceServer({ port: 0, latencyMs: 2, seed: 3 });
});
afterAll(async () => rs.close());

describe('the reverify command', () => {
  it('--help lists the commands', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['run', 'worker', 'status', 'report', 'demo', 'reference-server', 'server']) expect(r.stdout).toContain(c);
  });

  it('run as the installed command (its shebang), it starts with the malloc arena cap and 16 libuv threads in its environment', async () => {
    // Spawned as the file itself, as npm's bin link runs it (not `node bin/reverify.js`).
    const child = spawn(reverifyBin, ['reference-server', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          if (out.includes('listening on')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`exited with ${code} before listening`)));
      });
      // The node process itself (env execs it): its environment as it started.
      const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
      expect(environ).toContain('MALLOC_ARENA_MAX=2');
      expect(environ).toContain('UV_THREADPOOL_SIZE=16');
      expect(readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0')[0]).toMatch(/node$/);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('runs end to end and prints what it does, the result paths, key metrics and the UI link', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 10, repeats: 2 });
    const r = await cli(['run', '--inputs', d.inputsPath, '--rollouts', d.rolloutsPath, '-o', d.output, '--config', d.config]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const planning = lines.indexOf('Planning: checking every line of the inputs and rollouts and joining them by key');
    // `Started run` comes once the plan is proven and the outputs are open (before any /verify).
    expect(lines.findIndex((l) => l.startsWith('Started run '))).toBeLessThan(lines.indexOf('Verifying with 32 concurrent requests'));
    expect(planning).toBeGreaterThan(-1);
    expect(planning).toBeLessThan(lines.indexOf('Verifying with 32 concurrent requests'));
    expect(r.stdout).toContain(`Re-verified rollouts: ${d.output}`);
    expect(r.stdout).toContain(`Aggregate metrics: ${join(dir, 'out_aggregate_metrics.json')}`);
    expect(r.stdout).toContain('Key metrics for agent_a:');
    expect(lines).toContain(`Report: ${join(dir, 'out_report.html')}`);
    expect(r.stdout).toMatch(/Temporal UI: http:\/\/127\.0\.0\.1:\d+\/namespaces\/default\/workflows\/reverify-out\.jsonl-/);
    expect(readRows(d.output).length).toBe(20);
  });

  it('bad input is one line on stderr with file:line, exit status 1, nothing written', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 3, repeats: 2 });
    writeFileSync(d.inputsPath, readFileSync(d.inputsPath, 'utf8') + '{"oops"\n');
    const r = await cli(['run', '--inputs', d.inputsPath, '--rollouts', d.rolloutsPath, '-o', d.output, '--config', d.config]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^Error: .*inputs\\.jsonl:7: malformed JSON`))]);
  });

  it('missing files and invalid flags are one line each, exit status 1', async () => {
    const dir = tempDir();
    const missing = await cli([
      'run',
      '--inputs',
      join(dir, 'nope.jsonl'),
      '--rollouts',
      join(dir, 'r.jsonl'),
      '-o',
      join(dir, 'o.jsonl'),
      '--server',
      'rs=http://127.0.0.1:9',
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(`Error: --inputs file not found: '${join(dir, 'nope.jsonl')}'`);
    const zero = await cli([
      'run',
      '--inputs',
      'a',
      '--rollouts',
      'b',
      '-o',
      'c',
      '--server',
      'rs=http://127.0.0.1:9',
      '--concurrency',
      '0',
    ]);
    expect(zero.code).toBe(1);
    expect(zero.stderr.trim().split('\n')).toHaveLength(1);
    expect(zero.stderr).toContain('--concurrency');
    expect(zero.stderr).toContain('greater than or equal to 1');
  });

  it('two commands on the same output at once make one run with one writer; the second attaches', async () => {
    // The verifier holds every row after the 8th until the second command has attached, so the
    // first run cannot finish before the second command starts, however slowly it starts.
    let attach!: () => void;
    const attached = new Promise<void>((resolve) => (attach = resolve));
    let seen = 0;
    const gated = await startScriptedServer({
      verify: async () => {
        if (++seen > 8) await attached;
        return reward(1.0);
      },
    });
    try {
      const dir = tempDir();
      const d = await sampleRun(dir, gated.port, { tasks: 40, repeats: 4 });
      const args = [...runArgs(d), '--concurrency', '4'];
      const first = cli(args);
      while (seen < 8) await new Promise((r) => setTimeout(r, 50));
      const second = cli(args, temporal.env, (stdout) => {
        if (stdout.includes('Attached to the live run')) attach();
      }).finally(attach); // a second command that fails must not leave the first one held

      const [a, b] = await Promise.all([first, second]);
      attach();
      expect([a.code, b.code, b.stderr]).toEqual([0, 0, '']);
      expect(b.stdout).toContain('Attached to the live run');
      const keys = keysOf(readRows(d.output)).concat(keysOf(readRows(join(dir, 'out_failures.jsonl'))));
      expect(keys).toHaveLength(160);
      expect(new Set(keys).size).toBe(160);
      expect(gated.verifyBodies).toHaveLength(160);
    } finally {
      attach();
      await gated.close();
    }
  });
});
