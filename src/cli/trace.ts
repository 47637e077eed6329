/**
 * `REVERIFY_TRACE=1`: one line on stderr per step of a command's start and end
 * (`reverify-trace <ms since the process started> <step> rss=<MiB> heap=<MiB> external=<MiB> cpu=<ms>`:
 * the process's resident memory, V8's heap in use and the memory V8 objects hold outside it, such as
 * Buffers, and the CPU time, user and system, of all its threads so far), for bench/startup.ts. Off
 * by default.
 */
const on = process.env.REVERIFY_TRACE === '1';

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

export function trace(step: string): void {
  if (!on) return;
  const m = process.memoryUsage();
  const c = process.cpuUsage();
  const cpuMs = ((c.user + c.system) / 1000).toFixed(0);
  process.stderr.write(
    `reverify-trace ${performance.now().toFixed(1)} ${step} rss=${mib(m.rss)} heap=${mib(m.heapUsed)} external=${mib(m.external)} cpu=${cpuMs}\n`,
  );
}
