/** bench/lib/cpu.ts: the CPU of a process tree counts what its children spend. */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { threadCpuMs, treeCpuMs } from '../../bench/lib/cpu.js';

const total = (m: Map<string, number> | null) => [...(m ?? [])].reduce((a, [, ms]) => a + ms, 0);

describe('treeCpuMs', () => {
  it("adds a child's CPU to its parent's; a process alone does not", async () => {
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 600; while (Date.now() < end);'], { stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    await new Promise((r) => setTimeout(r, 450));
    const own = total(threadCpuMs(process.pid));
    const tree = total(treeCpuMs(process.pid));
    const childs = total(threadCpuMs(child.pid!));
    await exited;
    expect(childs).toBeGreaterThan(200);
    expect(tree - own).toBeGreaterThanOrEqual(childs - 20);
    expect(treeCpuMs(child.pid!)).toBeNull();
  });
});
