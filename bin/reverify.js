#!/usr/bin/env node
// The `reverify` command. It runs the bundle `npm run build` (and npm's postinstall) makes,
// dist/cli/main.mjs, while that is newer than every source file (src/, activities/, workflows/);
// otherwise (sources edited since, no bundle, or REVERIFY_FROM_SOURCE=1) the TypeScript sources
// through tsx (bundle-fresh.js). scripts/build-cli.mjs says why.
import { bundle, runsBundle } from './bundle-fresh.js';

if (runsBundle()) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
