/**
 * The Temporal server dies while `reverify run` follows a run: the command says the run is intact
 * and how to continue (exit status 6), not "the run failed". A real `temporal server start-dev` of
 * this test's own (it is killed), the CLI as a subprocess, the reference server made slow so the run
 * is still going when the server dies.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT_TEMPORAL_UNREACHABLE } from '../../src/cli/exit-codes.js';
import { ensureDevServer, stopDevServer } from '../../src/temporal/dev-server/index.js';
import { runArgs, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { reverifyBin } from '../helpers/worker-process.js';

const rs = useReferenceServer({ port: 0, latencyMs: 300 });
const dir = mkdtempSync(join(tmpdir(), 'reverify-lost-server-'));

afterAll(async () => {
  await stopDevServer(join(dir, 'state')).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe('the Temporal server dies during a run', () => {
  it('the command says the run is intact and to run it again when the server is back; exit 6', async () => {
    const server = await ensureDevServer({ stateDir: join(dir, 'state'), port: 0, uiPort: 0, readyTimeoutMs: 60_000 });
    const d = await sampleRun(dir, rs().port, { tasks: 40, repeats: 2 });
    const child = spawn(process.execPath, [reverifyBin, ...runArgs(d), '--concurrency', '2'], {
      // The shared bundle cache of the tests (temporal-env.ts), so the worker starts fast.
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: server.address,
        REVERIFY_TASK_QUEUE: `lost-server-${process.pid}`,
        REVERIFY_STATE_DIR: join(tmpdir(), 'reverify-test-state'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const verifying = new Promise<void>((resolve) => {
      child.stdout.on('data', (b: Buffer) => {
        stdout += b.toString();
        if (stdout.includes('Verifying with')) resolve();
      });
    });
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await verifying;
    process.kill(server.pid, 'SIGKILL');
    const code = await exited;

    const lines = stderr.trim().split('\n');
    expect(code).toBe(EXIT_TEMPORAL_UNREACHABLE);
    expect(lines.at(-1)).toMatch(
      new RegExp(
        `^Error: lost the Temporal server at ${server.address.replace(/\./g, '\\.')} \\(UNAVAILABLE.*\\)\\. The run is intact: the rows committed to ` +
          `${d.output.replace(/\./g, '\\.')} are safe .* When the server at .* answers again, run the same command again to continue the run\\.$`,
      ),
    );
    expect(stderr + stdout).not.toContain('the run failed');
    // No pages of gRPC retry warnings from the SDK core before that line.
    expect(stdout + stderr).not.toMatch(/WARN.*retried/);
  }, 120_000);
});
