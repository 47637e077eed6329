/**
 * Memory of processes, sampled from `/proc/<pid>/status` (Linux): `VmRSS` (resident now) every
 * 200 ms, keeping its peak, and `VmHWM` (the kernel's own resident high-water mark).
 */
import { readFileSync } from 'node:fs';

export interface RssPeak {
  label: string;
  pid: number;
  /** Largest VmRSS sampled, KiB. */
  peakRssKiB: number;
  /** Last VmHWM read while the process was alive, KiB (the peak over the whole process life). */
  hwmKiB: number;
  samples: number;
  /** Every sample: performance.now() ms and VmRSS KiB (for peaks within a phase). */
  series: { atMs: number; rssKiB: number }[];
}

/** Largest VmRSS sampled between two instants (KiB), or NaN when no sample falls in between. */
export function peakBetween(p: RssPeak, fromMs: number, toMs: number): number {
  let peak = NaN;
  for (const s of p.series) if (s.atMs >= fromMs && s.atMs <= toMs && !(s.rssKiB <= peak)) peak = s.rssKiB;
  return peak;
}

/** VmRSS and VmHWM of a live process, KiB; `null` once it has exited. */
export function readVm(pid: number): { rssKiB: number; hwmKiB: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  const rssKiB = field('VmRSS');
  // A zombie has no memory fields left.
  if (!Number.isFinite(rssKiB)) return null;
  return { rssKiB, hwmKiB: field('VmHWM') };
}

/** Samples a set of labelled pids until `stop()`. */
export class RssSampler {
  private readonly peaks = new Map<string, RssPeak>();
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 200) {
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  /** Starts sampling `pid` under `label` (replacing an earlier pid of that label). */
  watch(label: string, pid: number): void {
    this.peaks.set(label, { label, pid, peakRssKiB: 0, hwmKiB: 0, samples: 0, series: [] });
    this.sample();
  }

  sample(): void {
    for (const p of this.peaks.values()) {
      const vm = readVm(p.pid);
      if (!vm) continue;
      p.peakRssKiB = Math.max(p.peakRssKiB, vm.rssKiB);
      if (Number.isFinite(vm.hwmKiB)) p.hwmKiB = vm.hwmKiB;
      p.samples++;
      p.series.push({ atMs: performance.now(), rssKiB: vm.rssKiB });
    }
  }

  get(label: string): RssPeak | undefined {
    return this.peaks.get(label);
  }

  stop(): Map<string, RssPeak> {
    this.sample();
    clearInterval(this.timer);
    return this.peaks;
  }
}

export function fmtMiB(kib: number): string {
  return (kib / 1024).toFixed(0);
}
