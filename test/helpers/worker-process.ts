import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
export const reverifyBin = join(projectRoot, 'bin', 'reverify.js');

/** Starts `reverify worker` as a separate process; resolves once it polls the task queue. */
export async function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [reverifyBin, 'worker'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      log += d.toString();
      if (log.includes('polling task queue')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child.once('exit', (code) => reject(new Error(`worker exited early (${code}): ${log}`)));
    setTimeout(() => reject(new Error(`worker did not start within 60 s: ${log}`)), 60_000).unref();
  });
  return child;
}

/** SIGKILLs a process and waits until it is gone. */
export async function sigkill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}
