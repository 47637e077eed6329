#!/usr/bin/env -S MALLOC_ARENA_MAX=2 UV_THREADPOOL_SIZE=16 node
// The `reverify` command. It runs the bundle `npm run build` (and npm's postinstall) makes,
// dist/cli/main.mjs, while that is newer than every source file (src/, activities/, workflows/);
// otherwise (sources edited since, no bundle, or REVERIFY_FROM_SOURCE=1) the TypeScript sources
// through tsx (bundle-fresh.js). scripts/build-cli.mjs says why.
//
// The first line caps glibc's malloc arenas at two (by default glibc makes up to 8 per core, one
// for each thread that allocates: the SDK's Rust threads, V8's and libuv's helpers), so the memory
// the run's threads free is held in fewer heaps: the peak RSS of a run is 10–20 MiB lower for no
// more CPU (bench/ROUNDS.md, "Three rounds before"). glibc reads it only when a process starts, hence the
// shebang (`env -S`: GNU coreutils 8.30 or later, macOS); `node bin/reverify.js` runs without it, so
// the Dockerfile sets it for its image (test/unit/compose.test.ts checks that both say the same).
// UV_THREADPOOL_SIZE: libuv's threads for file reads and writes, 4 by default, which the batches in
// flight share: their part files' grouped writes and fsyncs held all four on a busy disk, and the
// lanes' row reads queued behind them (at --concurrency 1024, half the lanes waited on reads
// instead of sending: bench/README.md, issue 33 item 1). libuv reads it once, when the process
// first uses its pool (Node's module loader does, before any of this file runs), hence here.
import { bundle, runsBundle } from './bundle-fresh.js';

if (runsBundle()) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
