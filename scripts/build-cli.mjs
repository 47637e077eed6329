#!/usr/bin/env node
// Bundles the CLI (src/cli/main.ts and everything it imports from this project: src/, activities/;
// not node_modules) into dist/cli/main.mjs with esbuild, so that `reverify` starts without compiling
// TypeScript at every start (about 1 s of each command's start through tsx). Runs as part of
// npm's postinstall and as `npm run build`. bin/reverify.js uses the bundle only while it is newer
// than every source file, else it runs the sources through tsx, so an edit never runs stale code.
// The bundle sits two directories below the project root, as src/cli/main.ts does, so the sources'
// `import.meta.url`-relative paths (package.json, the project root) mean the same in both.
// The workflow code's bundle for the worker's sandbox (webpack, 5–6 s) is made here too, into
// dist/workflows/ (src/temporal/workflow-bundle.ts): the first run after an install or a build then
// does not make it (it did, into the state dir's cache, at its start). A failure here only warns:
// the first worker then makes it as before.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const entry = join(root, 'src', 'cli', 'main.ts');
if (!existsSync(entry)) {
  // A Docker layer that installs dependencies before the sources are copied: built later.
  console.log('build-cli: no sources yet, nothing to bundle');
  process.exit(0);
}
const { build } = await import('esbuild');
await build({
  // A thread module (src/io/start-thread.ts) is bundled on its own, beside main.mjs.
  entryPoints: {
    main: entry,
    'scan-ahead-thread': join(root, 'src', 'io', 'scan-ahead-thread.ts'),
    'plan-ahead-thread': join(root, 'activities', 'plan-ahead-thread.ts'),
    'estimate-history-thread': join(root, 'src', 'report', 'estimate-history-thread.ts'),
    'count-paired-units-thread': join(root, 'activities', 'count-paired-units-thread.ts'),
    // Run below, to bundle the workflow code.
    'workflow-bundle': join(root, 'src', 'temporal', 'workflow-bundle.ts'),
  },
  outdir: join(root, 'dist', 'cli'),
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // The Temporal SDK stays in node_modules: its maintainers support no bundling of it (the worker
  // resolves its thread and interceptor files by path, and its packages must be one copy each).
  // The other packages (zod, yaml, undici, commander) are bundled: each start then reads one file
  // instead of their 284 modules (60–90 ms of each start; docs/performance.md).
  external: ['@temporalio/*', 'esbuild', 'tsx', 'tsx/*', 'protobufjs', 'protobufjs/*'],
  // The bundled CommonJS packages (undici, commander) call `require` for Node's own modules.
  banner: { js: "import { createRequire as __reverifyRequire } from 'node:module'; const require = __reverifyRequire(import.meta.url);" },
  sourcemap: 'linked',
  logLevel: 'warning',
});

try {
  const { prebuildWorkflowBundle } = await import(join(root, 'dist', 'cli', 'workflow-bundle.mjs'));
  await prebuildWorkflowBundle();
} catch (err) {
  console.log(`build-cli: the workflow bundle was not made (${err?.message ?? err}); the first worker makes it`);
}
