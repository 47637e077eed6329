// Whether `reverify` runs its bundle: dist/cli/main.mjs, while that is newer than every source file
// (src/, activities/, workflows/, package.json) and REVERIFY_FROM_SOURCE is not 1; otherwise it runs
// the TypeScript sources through tsx (bin/reverify.js). The benches print which: from the sources
// the modules load ≈ 0.7 s later (1.3 s against 0.6) and bench/startup.ts's first /verify came at
// 2.6–3.0 s against 1.74–1.84.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const bundle = join(root, 'dist', 'cli', 'main.mjs');

/** The newest modification time of the files the bundle is made from. */
function newestSource() {
  let newest = statSync(join(root, 'package.json')).mtimeMs;
  for (const dir of ['src', 'activities', 'workflows']) {
    for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  return newest;
}

/** True when `reverify` runs the bundle, false when it runs the sources. */
export function runsBundle() {
  return process.env.REVERIFY_FROM_SOURCE !== '1' && existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource();
}
