/** bench/lib/cpu.ts: the CPU of a process tree counts what its children spend. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { threadCpuMs, treeCpuMs } from '../../bench/lib/cpu.js';

const total = (m: Map<string, number> | null) => [...(m ?? [])].reduce((a, [, ms]) => a + ms, 0);

/** A child that spends `ms` of its own CPU time (however long that takes), says so, then idles until its stdin closes. */
const SPEND = (ms: number) =>
  `const u = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
   while (u() < ${ms});
   process.stdout.write('spent\\n');
   process.stdin.resume();
   process.stdin.on('end', () => process.exit(0));`;

describe('treeCpuMs', () => {
  it("adds a child's CPU to its parent's; a process alone does not", async () => {
    // A fixed amount of work, not a time window: the relations below hold whatever the machine's load.
    const child = spawn(process.execPath, ['-e', SPEND(300)], { stdio: ['pipe', 'pipe', 'ignore'] });
    const exited = once(child, 'exit');
    await once(child.stdout, 'data'); // the child has spent its CPU and is idle now
    const own = total(threadCpuMs(process.pid));
    const tree = total(treeCpuMs(process.pid));
    const childs = total(threadCpuMs(child.pid!));
    child.stdin.end();
    await exited;
    // /proc counts in clock ticks (10 ms), per thread: a little less than the child measured itself.
    expect(childs).toBeGreaterThanOrEqual(250);
    expect(tree - own).toBeGreaterThanOrEqual(childs - 20);
    expect(treeCpuMs(child.pid!)).toBeNull();
  });
});
