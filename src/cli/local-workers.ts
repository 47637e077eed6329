/**
 * `reverify run --workers N`: besides its in-process worker, the command starts N - 1 `reverify
 * worker` processes on this machine, on the run's task queue and Temporal server, and stops them
 * when it ends. Each is a worker like any other (Temporal gives it workflow tasks and batches); the
 * run's `--concurrency` stays the ceiling of all of them together, since the workflow hands out the
 * shares. They get the credentials this command was given (`REVERIFY_SERVER_AUTH` in their
 * environment, never in the history or a message) and log errors only, as the in-process worker
 * does. Each is tied to this command by an IPC channel: if the command dies (even by SIGKILL), the
 * channel closes and the worker shuts down (worker-command.ts), so none is left behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TemporalTarget } from '../temporal/connection.js';
import { SERVER_AUTH_ENV, serverAuthForWorkers } from '../verifier/credentials.js';

/** How long a stopped worker gets to shut down (it cancels its batches at once) before it is killed. */
const STOP_GRACE_MS = 10_000;

/** The command's entry, from the sources and from the bundle alike (src/cli/ and dist/cli/ are two levels down). */
const CLI = fileURLToPath(new URL('../../bin/reverify.js', import.meta.url));

export interface LocalWorkers {
  /** Stops the workers and waits for them to exit (once; later calls wait for it). */
  stop(): Promise<void>;
}

/**
 * Starts `count` `reverify worker` processes for `target`. `warn` gets one line when a worker exits
 * before it is stopped (the run goes on with the others: Temporal retries its batches elsewhere).
 */
export function startLocalWorkers(count: number, target: TemporalTarget, warn: (line: string) => void): LocalWorkers {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: target.address,
    TEMPORAL_NAMESPACE: target.namespace,
    // What the shebang of bin/reverify.js sets (see there); spawned with node, it is not read.
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16',
    // Quiet as the in-process worker (main.ts): a run reports its failures itself.
    REVERIFY_LOG_LEVEL: process.env.REVERIFY_LOG_LEVEL ?? 'ERROR',
  };
  const auth = serverAuthForWorkers();
  if (auth !== '') env[SERVER_AUTH_ENV] = auth;
  let stopping = false;
  const children: ChildProcess[] = [];
  const exits: Array<Promise<void>> = [];
  for (let n = 2; n <= count + 1; n++) {
    const child = spawn(process.execPath, [CLI, 'worker'], { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    children.push(child);
    exits.push(
      new Promise<void>((resolve) => {
        child.once('error', (err) => {
          if (!stopping)
            warn(`Warning: local worker ${n} of ${count + 1} did not start (${err.message}); the run goes on with the others.`);
          resolve();
        });
        child.once('exit', (code, signal) => {
          if (!stopping)
            warn(`Warning: local worker ${n} of ${count + 1} exited (${signal ?? `status ${code}`}); the run goes on with the others.`);
          resolve();
        });
      }),
    );
  }
  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= (async () => {
        stopping = true;
        for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        const killer = setTimeout(() => children.forEach((c) => c.kill('SIGKILL')), STOP_GRACE_MS);
        await Promise.all(exits);
        clearTimeout(killer);
      })();
      return stopped;
    },
  };
}
