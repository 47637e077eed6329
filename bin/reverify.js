#!/usr/bin/env node
// The `reverify` command. It runs the bundle `npm run build` (and npm's postinstall) makes,
// dist/cli/main.mjs, while that is newer than every source file (src/, activities/, workflows/);
// otherwise (sources edited since, no bundle, or REVERIFY_FROM_SOURCE=1) the TypeScript sources
// through tsx. scripts/build-cli.mjs says why.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist', 'cli', 'main.mjs');

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

if (process.env.REVERIFY_FROM_SOURCE !== '1' && existsSync(bundle) && statSync(bundle).mtimeMs >= newestSource()) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
