/**
 * `reverify run` on the embedded dev server makes its in-process worker while the server is being
 * checked, from the address the state directory records (src/cli/run-connect.ts). The run goes the
 * same whether that early worker is kept (the recorded server, its namespace registered) or made
 * again (a namespace the server does not have yet: the check registers it).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ensureDevServer, stopDevServer } from '../../src/temporal/dev-server/index.js';
import { keysOf, readRows, runArgs, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir } from '../helpers/temporal-env.js';
import { reverifyBin } from '../helpers/worker-process.js';

const rs = useReferenceServer({ port: 0, latencyMs: 2, seed: 9 });

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** `reverify run` as a user runs it; resolves with its exit code and everything it printed. */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; log: string }> {
  return new Promise((resolve) => {
    const cli = spawn(process.execPath, [reverifyBin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    cli.stdout.on('data', (c) => (log += c));
    cli.stderr.on('data', (c) => (log += c));
    cli.on('exit', (code) => resolve({ code: code ?? -1, log }));
  });
}

describe('the in-process worker made while the embedded server is checked', () => {
  it('runs on the recorded server, and on a namespace the check registers only then', async () => {
    const stateDir = tempDir('reverify-state-');
    const ports = { REVERIFY_TEMPORAL_PORT: String(await freePort()), REVERIFY_TEMPORAL_UI_PORT: String(await freePort()) };
    await ensureDevServer({ stateDir, port: Number(ports.REVERIFY_TEMPORAL_PORT), uiPort: Number(ports.REVERIFY_TEMPORAL_UI_PORT) });
    const env = { ...process.env, ...ports, REVERIFY_STATE_DIR: stateDir, TEMPORAL_ADDRESS: '', REVERIFY_TASK_QUEUE: 'reverify' };
    try {
      for (const namespace of ['default', 'reverify-early-worker']) {
        const d = await sampleRun(tempDir(), rs().port, { tasks: 10, repeats: 2 });
        const r = await run([...runArgs(d), '--no-rejudge'], { ...env, TEMPORAL_NAMESPACE: namespace });
        expect(r.code, r.log).toBe(0);
        expect(r.log).toContain(`/namespaces/${namespace}/workflows/`);
        const keys = keysOf(readRows(d.output));
        expect(keys).toHaveLength(20);
        expect(new Set(keys).size).toBe(20);
      }
    } finally {
      await stopDevServer(stateDir);
    }
  });
});
