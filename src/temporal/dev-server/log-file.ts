/** The dev server's log file: rotated before each start; its last lines quoted in errors. */
import { closeSync, fstatSync, openSync, readSync, renameSync, statSync } from 'node:fs';

export function rotateLog(logPath: string): void {
  try {
    if (statSync(logPath).size > 0) renameSync(logPath, `${logPath}.1`);
  } catch {
    // no previous log
  }
}

/** Last `lines` non-empty lines of a file (reads at most the last 64 KiB). */
export function logTail(path: string, lines: number): string[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const { size } = fstatSync(fd);
    const len = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf
      .toString('utf8')
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l !== '')
      .slice(-lines);
  } finally {
    closeSync(fd);
  }
}
