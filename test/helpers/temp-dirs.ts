/** Temporary directories for tests (no Temporal here, so unit tests can use it). */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** A fresh temporary directory (left in place). */
export function tempDir(prefix = 'reverify-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TempRoot {
  /** The root directory (set in `beforeAll`). */
  readonly path: string;
  /** A path in the root no earlier call returned, `<stem><n><ext>`; nothing is created. */
  unique: (stem: string, ext?: string) => string;
  /** A fresh empty subdirectory `d<n>` of the root, so a test can list exactly what it wrote. */
  freshDir: () => string;
}

/** One temporary directory for a test file: made in `beforeAll`, removed with its content in `afterAll`. */
export function useTempRoot(prefix: string): TempRoot {
  let root = '';
  let seq = 0;
  beforeAll(() => {
    root = tempDir(prefix);
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });
  const unique = (stem: string, ext = '') => join(root, `${stem}${seq++}${ext}`);
  return {
    get path() {
      return root;
    },
    unique,
    freshDir: () => {
      const d = unique('d');
      mkdirSync(d);
      return d;
    },
  };
}
