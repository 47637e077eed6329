import { stat } from 'node:fs/promises';

/** True if something exists at `path` (a file, a directory, ...). */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
