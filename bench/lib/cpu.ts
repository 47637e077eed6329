/**
 * CPU time actually consumed by processes (Linux `/proc/<pid>/task/<tid>/stat`: utime + stime),
 * per thread name, sampled periodically so that the CPU spent inside a time window can be read
 * afterwards. Unlike wall-clock rates this barely depends on what else the machine is running.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let clkTck: number | undefined;
function ticksPerSecond(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/** CPU milliseconds per thread name (`comm`) of a process, or null once it has exited. */
export function threadCpuMs(pid: number): Map<string, number> | null {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const msPerTick = 1000 / ticksPerSecond();
  const byName = new Map<string, number>();
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    const name = stat.slice(open + 1, close).replace(/[\d]+$/, '#'); // "tokio-runtime-w", "libuv-worker", "node" …
    const fields = stat.slice(close + 2).split(' ');
    // Fields after the name start at field 3 (state); utime is field 14, stime field 15.
    const ms = (Number(fields[11]) + Number(fields[12])) * msPerTick;
    byName.set(name, (byName.get(name) ?? 0) + ms);
  }
  return byName;
}

/** The pids of `pid`'s children (Linux `/proc/<pid>/task/<tid>/children`). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (c.trim() !== '') out.push(Number(c));
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** `threadCpuMs` of a process and all its descendants, summed per thread name; null once the process has exited. */
export function treeCpuMs(pid: number): Map<string, number> | null {
  const own = threadCpuMs(pid);
  if (own === null) return null;
  for (const child of childrenOf(pid)) {
    for (const [name, ms] of treeCpuMs(child) ?? []) own.set(name, (own.get(name) ?? 0) + ms);
  }
  return own;
}

interface Sample {
  atMs: number;
  perPid: Map<string, Map<string, number>>;
}

/** Samples the CPU time of labelled pids every `intervalMs` (performance.now() timestamps). */
export class CpuSampler {
  private readonly pids = new Map<string, { pid: number; tree: boolean }>();
  private readonly samples: Sample[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 100) {
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  /** Samples `pid` (with `tree`: and every process it starts, such as `reverify run --workers`'s workers). */
  watch(label: string, pid: number, opts: { tree?: boolean } = {}): void {
    this.pids.set(label, { pid, tree: opts.tree === true });
  }

  sample(): void {
    const perPid = new Map<string, Map<string, number>>();
    for (const [label, { pid, tree }] of this.pids) {
      const t = tree ? treeCpuMs(pid) : threadCpuMs(pid);
      if (t) perPid.set(label, t);
    }
    this.samples.push({ atMs: performance.now(), perPid });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The sample taken closest to `atMs` (the last one before it, if any). */
  private at(atMs: number): Sample | undefined {
    let best: Sample | undefined;
    for (const s of this.samples) {
      if (s.atMs <= atMs) best = s;
      else return best ?? s;
    }
    return best;
  }

  /**
   * CPU ms each label used between two instants, total and per thread name. A label whose process
   * exited before `toMs` counts up to its last sample.
   */
  between(fromMs: number, toMs: number): Map<string, { totalMs: number; threads: Map<string, number> }> {
    const a = this.at(fromMs);
    const b = this.at(toMs);
    const out = new Map<string, { totalMs: number; threads: Map<string, number> }>();
    if (!a || !b) return out;
    for (const [label, end] of b.perPid) {
      const start = a.perPid.get(label) ?? new Map<string, number>();
      const threads = new Map<string, number>();
      let totalMs = 0;
      for (const [name, ms] of end) {
        const d = ms - (start.get(name) ?? 0);
        if (d <= 0) continue;
        threads.set(name, d);
        totalMs += d;
      }
      out.set(label, { totalMs, threads: new Map([...threads].sort((x, y) => y[1] - x[1])) });
    }
    return out;
  }
}

/** `label 1234 ms (name 800, name 300, …)` for the busiest threads. */
export function describeCpu(label: string, used: { totalMs: number; threads: Map<string, number> } | undefined, rows: number): string {
  if (!used) return `${label}: -`;
  const top = [...used.threads]
    .slice(0, 4)
    .map(([name, ms]) => `${name} ${ms.toFixed(0)}`)
    .join(', ');
  return `${label} ${used.totalMs.toFixed(0)} ms = ${((1000 * used.totalMs) / rows).toFixed(0)} µs/row (${top})`;
}
