/** The real `reverify` command as a subprocess, and command lines it prints run through `sh`. */
import { spawn } from 'node:child_process';
import { projectRoot, reverifyBin } from './worker-process.js';

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
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
    child.on('exit', (code, signal) => {
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
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
