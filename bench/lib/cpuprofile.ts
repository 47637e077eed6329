/**
 * Self time by function (and by area) of V8 `.cpuprofile` files, as written by `node --cpu-prof`.
 */
import { readFileSync } from 'node:fs';
import { basename, relative } from 'node:path';
import { ROOT } from './procs.js';
import { table } from './table.js';

/** Scripts of this project (not node_modules): their functions get an inclusive-time table. */
function isProjectUrl(url: string): boolean {
  const u = url.replace(/^file:\/\//, '');
  return u.startsWith(ROOT) && !u.includes('/node_modules/');
}

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

/** A time window in CLOCK_MONOTONIC microseconds (the clock of V8's profiler timestamps on Linux). */
export interface MonotonicWindow {
  startUs: number;
  endUs: number;
}

/** CLOCK_MONOTONIC microseconds of a `performance.now()` value of this process. */
export function monotonicUs(performanceNowMs: number): number {
  const nowUs = Number(process.hrtime.bigint() / 1000n);
  return nowUs - (performance.now() - performanceNowMs) * 1000;
}

/** Per-thread summary: sampled and idle time (within the window). */
export interface ThreadTime {
  path: string;
  sampledMs: number;
  idleMs: number;
}

/** Self time per function over one or more profiles (only samples inside `window`, if given), largest first. */
export function selfTimes(
  paths: string[],
  window?: MonotonicWindow,
): { total: number; byFunction: SelfTime[]; byArea: Map<string, number>; threads: ThreadTime[]; inclusive: SelfTime[] } {
  const byKey = new Map<string, SelfTime>();
  const inclusiveByKey = new Map<string, SelfTime>();
  const threads: ThreadTime[] = [];
  let total = 0;
  for (const path of paths) {
    const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const selfUs = new Map<number, number>();
    const thread: ThreadTime = { path, sampledMs: 0, idleMs: 0 };
    let t = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      t += profile.timeDeltas[i] ?? 0;
      if (window && (t < window.startUs || t > window.endUs)) continue;
      const dt = profile.timeDeltas[i + 1] ?? 0; // a sample's time runs until the next one
      selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
      thread.sampledMs += dt / 1000;
      if (idleIds.has(profile.samples[i])) thread.idleMs += dt / 1000;
    }
    threads.push(thread);
    for (const [id, us] of selfUs) {
      const cf = nodes.get(id)!.callFrame;
      const name = cf.functionName || '(anonymous)';
      const key = `${name}@${cf.url}:${cf.lineNumber}`;
      const entry = byKey.get(key) ?? { name, where: shortWhere(cf.url, cf.lineNumber), area: areaOf(cf.url, name), ms: 0 };
      entry.ms += us / 1000;
      byKey.set(key, entry);
      total += us / 1000;
      // Inclusive time of the project's functions on this sample's stack (each counted once).
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const f = nodes.get(cur)!.callFrame;
        if (!isProjectUrl(f.url)) continue;
        const fname = f.functionName || '(anonymous)';
        const k = `${fname}@${f.url}:${f.lineNumber}`;
        if (seen.has(k)) continue;
        seen.add(k);
        const inc = inclusiveByKey.get(k) ?? { name: fname, where: shortWhere(f.url, f.lineNumber), area: areaOf(f.url, fname), ms: 0 };
        inc.ms += us / 1000;
        inclusiveByKey.set(k, inc);
      }
    }
  }
  const byFunction = [...byKey.values()].sort((a, b) => b.ms - a.ms);
  const byArea = new Map<string, number>();
  for (const f of byFunction) byArea.set(f.area, (byArea.get(f.area) ?? 0) + f.ms);
  const inclusive = [...inclusiveByKey.values()].sort((a, b) => b.ms - a.ms);
  return { total, byFunction, byArea: new Map([...byArea].sort((a, b) => b[1] - a[1])), threads, inclusive };
}

/** The top of a profile as text: per thread, by area, then by function (self time). */
export function describeProfiles(paths: string[], top = 25, window?: MonotonicWindow): string {
  const { total, byFunction, byArea, threads, inclusive } = selfTimes(paths, window);
  const busy = total - (byArea.get('(idle)') ?? 0);
  const pct = (ms: number, of: number) => `${((100 * ms) / of).toFixed(1)}%`;
  const areas = [...byArea].slice(0, 14).map(([area, ms]) => [area, ms.toFixed(0), pct(ms, total), area === '(idle)' ? '' : pct(ms, busy)]);
  const fns = byFunction
    .filter((f) => f.name !== '(idle)')
    .slice(0, top)
    .map((f) => [f.name.slice(0, 48), f.area, f.ms.toFixed(0), pct(f.ms, busy), f.where.slice(-70)]);
  const perThread = threads.map((t) => [
    basename(t.path),
    t.sampledMs.toFixed(0),
    (t.sampledMs - t.idleMs).toFixed(0),
    t.sampledMs > 0 ? pct(t.sampledMs - t.idleMs, t.sampledMs) : '-',
  ]);
  return [
    `profiled ${paths.length} thread(s)${window ? ` during ${((window.endUs - window.startUs) / 1e6).toFixed(1)} s` : ''}: ` +
      `${total.toFixed(0)} ms sampled, ${busy.toFixed(0)} ms not idle`,
    '',
    table(['thread profile', 'sampled ms', 'busy ms', 'busy %'], perThread),
    '',
    table(['area', 'self ms', '% all', '% busy'], areas),
    '',
    table(['function (self time)', 'area', 'self ms', '% busy', 'where'], fns),
    '',
    table(
      ['project function (inclusive time)', 'total ms', '% busy', 'where'],
      inclusive.slice(0, Math.ceil(top / 2)).map((f) => [f.name.slice(0, 48), f.ms.toFixed(0), pct(f.ms, busy), f.where.slice(-70)]),
    ),
  ].join('\n');
}
