/**
 * `REVERIFY_TRACE=1`: one line on stderr per step of a command's start and end
 * (`reverify-trace <ms since the process started> <step>`), for bench/startup.ts. Off by default.
 */
const on = process.env.REVERIFY_TRACE === '1';

export function trace(step: string): void {
  if (on) process.stderr.write(`reverify-trace ${performance.now().toFixed(1)} ${step}\n`);
}
