/**
 * Self time by function (and by area) of V8 `.cpuprofile` files, as written by `node --cpu-prof`.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ROOT } from './procs.js';
import { table } from './table.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  where: string;
  area: string;
  ms: number;
}

/** Which part of the stack a script URL belongs to. */
function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const u = url.replace(/^file:\/\//, '');
  if (u.includes('/node_modules/')) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u);
    return m ? m[1] : 'node_modules';
  }
  if (u.startsWith('node:')) return u.split('/').slice(0, 2).join('/');
  if (u.startsWith(ROOT)) return relative(ROOT, u).split('/').slice(0, 2).join('/');
  return u;
}

function shortWhere(url: string, line: number): string {
  if (!url) return '';
  const u = url.replace(/^file:\/\//, '');
  const rel = u.startsWith(ROOT) ? relative(ROOT, u) : u.replace(/^.*\/node_modules\//, '');
  return `${rel}:${line + 1}`;
}

/** Self time per function over one or more profiles, largest first. */
export function selfTimes(paths: string[]): { total: number; byFunction: SelfTime[]; byArea: Map<string, number> } {
  const byKey = new Map<string, SelfTime>();
  let total = 0;
  for (const path of paths) {
    const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const selfUs = new Map<number, number>();
    for (let i = 0; i < profile.samples.length; i++) {
      const dt = profile.timeDeltas[i + 1] ?? 0; // a sample's time runs until the next one
      selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
    }
    for (const [id, us] of selfUs) {
      const cf = nodes.get(id)!.callFrame;
      const name = cf.functionName || '(anonymous)';
      const key = `${name}@${cf.url}:${cf.lineNumber}`;
      const entry = byKey.get(key) ?? { name, where: shortWhere(cf.url, cf.lineNumber), area: areaOf(cf.url, name), ms: 0 };
      entry.ms += us / 1000;
      byKey.set(key, entry);
      total += us / 1000;
    }
  }
  const byFunction = [...byKey.values()].sort((a, b) => b.ms - a.ms);
  const byArea = new Map<string, number>();
  for (const f of byFunction) byArea.set(f.area, (byArea.get(f.area) ?? 0) + f.ms);
  return { total, byFunction, byArea: new Map([...byArea].sort((a, b) => b[1] - a[1])) };
}

/** The top of a profile as text: by area, then by function (self time). */
export function describeProfiles(paths: string[], top = 25): string {
  const { total, byFunction, byArea } = selfTimes(paths);
  const busy = total - (byArea.get('(idle)') ?? 0);
  const pct = (ms: number, of: number) => `${((100 * ms) / of).toFixed(1)}%`;
  const areas = [...byArea].slice(0, 14).map(([area, ms]) => [area, ms.toFixed(0), pct(ms, total), area === '(idle)' ? '' : pct(ms, busy)]);
  const fns = byFunction
    .filter((f) => f.name !== '(idle)')
    .slice(0, top)
    .map((f) => [f.name.slice(0, 48), f.area, f.ms.toFixed(0), pct(f.ms, busy), f.where.slice(-70)]);
  return [
    `profiled ${paths.length} thread(s): ${total.toFixed(0)} ms sampled, ${busy.toFixed(0)} ms not idle`,
    '',
    table(['area', 'self ms', '% all', '% busy'], areas),
    '',
    table(['function (self time)', 'area', 'self ms', '% busy', 'where'], fns),
  ].join('\n');
}
