/**
 * What users run on an output once its run has ended, each timed with its peak RSS (issue 33 item
 * 3): `status`, `history`, `read`, `report` and `aggregate`, one after the other against the
 * Temporal server that ran it; and the work directory's size sampled along the run.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnCli } from './procs.js';
import { fmtMiB, RssSampler } from './rss.js';

export interface CommandCost {
  command: string;
  exit: number;
  seconds: number;
  /** Peak VmRSS sampled, and VmHWM, MiB. */
  peakMiB: string;
  hwmMiB: string;
}

/** The five commands on `output` (made from `rollouts`, scored by `server` = `name=url`). */
export function afterRunCommands(o: { output: string; rollouts: string; config: string; server: string; dir: string }): string[][] {
  return [
    ['status', '-o', o.output, '--json'],
    ['history', '-o', o.output, '--json'],
    ['read', '-o', o.output, '--records'],
    ['report', '-o', o.output, '--rollouts', o.rollouts],
    ['aggregate', '-i', o.output, '-o', join(o.dir, 'merged.jsonl'), '--overwrite', '--config', o.config, '--server', o.server],
  ];
}

/** Runs each command (stdout and stderr to `<dir>/<command>.log`, `read`'s rows to /dev/null). */
export async function measureCommands(
  commands: string[][],
  env: NodeJS.ProcessEnv,
  dir: string,
  intervalMs: number,
): Promise<CommandCost[]> {
  const costs: CommandCost[] = [];
  for (const args of commands) {
    const rss = new RssSampler(intervalMs);
    const t0 = performance.now();
    const p = spawnCli(args, { env, logPath: args[0] === 'read' ? '/dev/null' : join(dir, `${args[0]}.log`) });
    rss.watch(args[0], p.pid);
    const exit = await p.exited;
    const peak = rss.stop().get(args[0]);
    const cost: CommandCost = {
      command: args[0],
      exit,
      seconds: (performance.now() - t0) / 1000,
      peakMiB: peak ? fmtMiB(peak.peakRssKiB) : '?',
      hwmMiB: peak ? fmtMiB(peak.hwmKiB) : '?',
    };
    console.log(
      `    reverify ${args[0]}: exit ${exit}, ${cost.seconds.toFixed(1)} s, peak VmRSS ${cost.peakMiB} MiB, VmHWM ${cost.hwmMiB} MiB`,
    );
    costs.push(cost);
  }
  return costs;
}

/** Bytes of every file under `dir` (0 when it is gone). */
export function treeBytes(dir: string): number {
  let total = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      const s = statSync(path);
      total += s.isDirectory() ? treeBytes(path) : s.size;
    } catch {
      // removed between the listing and the stat
    }
  }
  return total;
}

/** Samples `treeBytes(dir)` every `everyMs` until `stop()`, which returns the largest seen. */
export function sampleTreeBytes(dir: string, everyMs = 5_000): { stop(): number } {
  let peak = 0;
  const sample = () => {
    peak = Math.max(peak, treeBytes(dir));
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      sample();
      clearInterval(timer);
      return peak;
    },
  };
}
