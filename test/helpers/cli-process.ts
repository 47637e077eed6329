/** The real `reverify` command as a subprocess, and command lines it prints run through `sh`. */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { projectRoot, reverifyBin } from './worker-process.js';

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Resolves once `child` has exited and its output is read: the process can exit before the last of
 * it comes through the pipes (under load `list --json` came back empty: "Unexpected end of JSON
 * input"). Not 'close': a worker process it started may hold the pipes open after it exits, so the
 * pipes get a few seconds after the exit to end.
 */
function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const ended = (s: Readable | null) => (s === null || s.readableEnded ? Promise.resolve() : new Promise((r) => s.once('end', r)));
  const output = Promise.all([ended(child.stdout), ended(child.stderr)]);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      const grace = setTimeout(() => resolve({ code, signal }), 5_000);
      void output.then(() => {
        clearTimeout(grace);
        resolve({ code, signal });
      });
    });
  });
}

/** Runs `reverify args` with `env` added (killed after `timeoutMs`, so a hanging run fails the test instead of blocking it). */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 90_000): Promise<CliOutcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [reverifyBin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    void exited(child).then(({ code, signal }) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? -1 : -2), stdout, stderr });
    });
  });
}

/** Runs a command line as printed by `reverify` (`reverify …`, shell-quoted) through `sh`, with `env` added. */
export function runShell(commandLine: string, env: Record<string, string>): Promise<CliOutcome> {
  const line = commandLine.replace(/^reverify /, `'${process.execPath}' '${reverifyBin}' `);
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', line], { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    void exited(child).then(({ code }) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
