// Preload for a measured process (`--node-args="--import ./bench/lib/memlog.mjs"`): every 2 s, each
// thread (main and worker threads alike) writes one line to stderr with the process's RSS and its
// own V8 heap, in MiB, so a run's log shows which phase holds what.
import { getHeapStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';

const mib = (n) => Math.round(n / 2 ** 20);
const timer = setInterval(() => {
  const h = getHeapStatistics();
  const m = process.memoryUsage();
  process.stderr.write(
    `memlog t${threadId} ${Math.round(performance.now() / 1000)}s rss=${mib(m.rss)} heapTotal=${mib(h.total_heap_size)} ` +
      `heapUsed=${mib(h.used_heap_size)} ext=${mib(h.external_memory)} ab=${mib(m.arrayBuffers)}\n`,
  );
}, 2000);
timer.unref();
