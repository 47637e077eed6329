/**
 * A real MLflow tracking server for the upload tests: the pinned `mlflow` that
 * scripts/install-mlflow.sh installs into .mlflow/venv, started with a SQLite backend and artifact
 * proxying on a free port, stopped after the file. When the install could not reach PyPI, the
 * tests are skipped with the reason the install wrote (`mlflowSkipReason`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from './temp-dirs.js';
import { projectRoot } from './worker-process.js';

const MLFLOW = join(projectRoot, '.mlflow', 'venv', 'bin', 'mlflow');
const INSTALL_ERROR = join(projectRoot, '.mlflow', 'install-error');

/** Why the MLflow tests cannot run here, or null when the server is installed. */
export function mlflowSkipReason(): string | null {
  if (existsSync(MLFLOW)) return null;
  if (existsSync(INSTALL_ERROR)) return `MLflow tests skipped: ${readFileSync(INSTALL_ERROR, 'utf8').trim()}`;
  return `MLflow tests skipped: ${MLFLOW} is missing; run scripts/install-mlflow.sh (npm ci runs it)`;
}

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function healthy(url: string, child: ChildProcess, log: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`mlflow server exited (${child.exitCode}): ${log().slice(-2000)}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`mlflow server did not answer /health within ${timeoutMs} ms: ${log().slice(-2000)}`);
}

/** Starts `mlflow server` for the test file (beforeAll) and stops it (afterAll); returns its URL getter. */
export function useMlflowServer(): () => string {
  let child: ChildProcess | null = null;
  let url = '';
  beforeAll(async () => {
    if (mlflowSkipReason() !== null) return;
    const dir = tempDir('reverify-mlflow-');
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    let log = '';
    child = spawn(
      MLFLOW,
      [
        'server',
        '--backend-store-uri',
        `sqlite:///${join(dir, 'mlflow.db')}`,
        '--serve-artifacts',
        '--artifacts-destination',
        join(dir, 'artifacts'),
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--workers',
        '1',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        env: { ...process.env, MLFLOW_TRACKING_TOKEN: '', MLFLOW_SERVER_ENABLE_JOB_EXECUTION: 'false' },
      },
    );
    child.stdout!.on('data', (d) => (log += d));
    child.stderr!.on('data', (d) => (log += d));
    await healthy(url, child, () => log, 120_000);
  }, 130_000);
  afterAll(async () => {
    if (child?.pid === undefined || child.exitCode !== null) return;
    const exited = new Promise((r) => child!.once('exit', r));
    process.kill(-child.pid, 'SIGTERM');
    await exited;
  });
  return () => url;
}
