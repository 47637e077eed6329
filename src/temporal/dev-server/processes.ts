/**
 * Processes by pid: alive or not (a zombie counts as gone), their argv from /proc, and termination
 * (SIGTERM, then SIGKILL).
 */
import { readFileSync } from 'node:fs';
import { sleep } from './sleep.js';

const STOP_TIMEOUT_MS = 20_000;

export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A zombie answers kill(0) but is gone.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
  } catch {
    // no procfs (macOS): trust kill(0)
  }
  return true;
}

/** argv of a process (Linux); undefined when unknown. */
export function processArgs(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
  } catch {
    return undefined;
  }
}

export async function terminate(pid: number): Promise<void> {
  if (!pidAlive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!pidAlive(pid)) return;
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  const killDeadline = Date.now() + 5_000;
  while (Date.now() < killDeadline && pidAlive(pid)) await sleep(100);
}
