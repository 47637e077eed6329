import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/run-command.js';
import { ensureDevServer, stopDevServer } from '../../src/temporal/dev-server/index.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { captureIo, keysOf, readRows, runArgs, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { mulberry32 } from '../../src/reference-server/prng.js';
import { reverifyBin, sigkill, startWorkerProcess } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('cluster');
const rs = useReferenceServer({ port: 0, latencyMs: 15, seed: 6 });
const client = useTemporalClient(temporal);

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('several processes', () => {
  it('two `reverify worker` processes share the task queue and finish one run together', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 100, repeats: 4 });
    const workers = [await startWorkerProcess(temporal.env), await startWorkerProcess(temporal.env)];
    try {
      const result = await runCommand(
        {
          inputs: d.inputsPath,
          rollouts: d.rolloutsPath,
          output: d.output,
          configs: [d.config],
          concurrency: 8,
          batchSize: 10,
          maxAttempts: 1,
        },
        { worker: false, heartbeatTimeoutMs: 10_000 },
        captureIo(),
      );
      expect(result.done).toBe(400);
    } finally {
      await Promise.all(workers.map(sigkill));
    }
    const keys = keysOf(readRows(d.output));
    expect(new Set(keys).size).toBe(400);
    expect(keys).toHaveLength(400);
    // Which worker ran each batch is in the history (the identity of ActivityTaskStarted).
    const history = await client().workflow.getHandle(workflowIdForOutput(d.output)).fetchHistory();
    const identities = new Set((history.events ?? []).map((e) => e.activityTaskStartedEventAttributes?.identity).filter(Boolean));
    expect(identities.size).toBe(2);
  });

  it(
    'kill -9 of a random worker at random moments, three times: every key once, the global concurrency cap held',
    { timeout: 240_000 },
    async () => {
      const dir = tempDir();
      const d = await sampleRun(dir, rs().port, { tasks: 150, repeats: 4 });
      rs().resetStats();
      const workers: ChildProcess[] = await Promise.all([0, 1, 2].map(() => startWorkerProcess(temporal.env)));
      const random = mulberry32(33);
      const killed: number[] = [];
      const killer = (async () => {
        // Three kills, each after a random number of further /verify requests; a fresh worker replaces each.
        for (let k = 0; k < 3; k++) {
          const at = rs().stats().requests.verify + 40 + Math.floor(random() * 80);
          while (rs().stats().requests.verify < at && rs().stats().requests.verify < 560) await new Promise((r) => setTimeout(r, 20));
          const victim = Math.floor(random() * workers.length);
          killed.push(workers[victim].pid!);
          await sigkill(workers[victim]);
          workers[victim] = await startWorkerProcess(temporal.env);
        }
      })();
      try {
        const result = await runCommand(
          {
            inputs: d.inputsPath,
            rollouts: d.rolloutsPath,
            output: d.output,
            configs: [d.config],
            concurrency: 6,
            batchSize: 20,
            maxAttempts: 1,
          },
          { worker: false, heartbeatTimeoutMs: 4_000 },
          captureIo(),
        );
        expect(result.done).toBe(600);
        await killer;
      } finally {
        await killer.catch(() => undefined);
        await Promise.all(workers.map(sigkill));
      }
      expect(killed).toHaveLength(3);
      const keys = keysOf(readRows(d.output));
      expect(keys).toHaveLength(600);
      expect(new Set(keys).size).toBe(600);
      // The cap is the run's, not each worker's: lanes are lent by the workflow.
      expect(rs().stats().peak_verify_in_flight).toBeLessThanOrEqual(6);
    },
  );

  it('the embedded Temporal server SIGKILLed mid-run and started again: the run completes, every key once', async () => {
    const dir = tempDir();
    const stateDir = tempDir('reverify-state-');
    const ports = { REVERIFY_TEMPORAL_PORT: String(await freePort()), REVERIFY_TEMPORAL_UI_PORT: String(await freePort()) };
    const env = { ...process.env, ...ports, REVERIFY_STATE_DIR: stateDir, TEMPORAL_ADDRESS: '', REVERIFY_TASK_QUEUE: 'reverify' };
    const d = await sampleRun(dir, rs().port, { tasks: 100, repeats: 4 });
    rs().resetStats();
    const cli = spawn(process.execPath, [reverifyBin, ...runArgs(d), '--concurrency', '4', '--batch-size', '10', '--no-rejudge'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    cli.stdout.on('data', (c) => (log += c));
    cli.stderr.on('data', (c) => (log += c));
    const exited = new Promise<number>((r) => cli.on('exit', (code) => r(code ?? -1)));
    try {
      while (rs().stats().requests.verify < 80) await new Promise((r) => setTimeout(r, 50));
      const server = await ensureDevServer({
        stateDir,
        port: Number(ports.REVERIFY_TEMPORAL_PORT),
        uiPort: Number(ports.REVERIFY_TEMPORAL_UI_PORT),
      });
      expect(server.started).toBe(false); // the CLI's own server
      process.kill(server.pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 2000));
      const again = await ensureDevServer({
        stateDir,
        port: Number(ports.REVERIFY_TEMPORAL_PORT),
        uiPort: Number(ports.REVERIFY_TEMPORAL_UI_PORT),
      });
      expect(again.started).toBe(true);
      expect(await exited, log).toBe(0);
    } finally {
      if (cli.exitCode === null) cli.kill('SIGKILL');
      await stopDevServer(stateDir);
    }
    const keys = keysOf(readRows(d.output));
    expect(keys).toHaveLength(400);
    expect(new Set(keys).size).toBe(400);
    expect(log).toContain(`Re-verified rollouts: ${d.output}`);
  });
});
