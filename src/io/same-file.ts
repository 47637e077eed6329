/**
 * Whether two paths name the same file, whatever the spelling: symlinks, hard links, `..` segments.
 * A path that does not exist yet (an output about to be created) is compared by where it would be
 * created: the real path of its parent directory plus its base name.
 */
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';

/** Where a path leads: its real path, and its device and inode when it exists. */
export interface PathIdentity {
  real: string;
  /** Null when nothing exists at the path; `directory` for a directory (or a link to one). */
  file: { dev: number; ino: number; directory: boolean } | null;
}

/** The identity of `path` (resolved against the working directory). */
export async function pathIdentity(path: string): Promise<PathIdentity> {
  const abs = resolve(path);
  try {
    const [real, st] = await Promise.all([realpath(abs), stat(abs)]);
    return { real, file: { dev: st.dev, ino: st.ino, directory: st.isDirectory() } };
  } catch {
    try {
      return { real: join(await realpath(dirname(abs)), basename(abs)), file: null };
    } catch {
      // No parent either: nothing that exists can be this path.
      return { real: abs, file: null };
    }
  }
}

/** True when both identities are one file: the same device and inode, or the same real path. */
export function sameFile(a: PathIdentity, b: PathIdentity): boolean {
  if (a.file && b.file) return a.file.dev === b.file.dev && a.file.ino === b.file.ino;
  return a.real === b.real;
}

/** True when `inner` lies inside the directory `dir` (at any depth). */
export function isInside(inner: PathIdentity, dir: PathIdentity): boolean {
  return inner.real.startsWith(dir.real.endsWith(sep) ? dir.real : dir.real + sep);
}
