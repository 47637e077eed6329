import { stat } from 'node:fs/promises';

/** A file's size and modification time now (what a plan records of the files it read), or null if it is gone. */
export async function fileNow(path: string): Promise<{ size: number; mtimeMs: number } | null> {
  try {
    const s = await stat(path);
    return { size: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return null;
  }
}

/** True when both describe the same size and modification time. */
export function sameIdentity(a: { size: number; mtimeMs: number }, b: { size: number; mtimeMs: number } | null): boolean {
  return b !== null && a.size === b.size && a.mtimeMs === b.mtimeMs;
}
