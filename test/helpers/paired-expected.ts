/**
 * The report's paired statistics computed here, independently of src/report, from a run's files:
 * per agent and over all agents, the paired difference new − old with Miller's clustered SE (the
 * double sum over pairs of rows of a task, written out), the flips on pass/fail (reward ≥ 0.5) and
 * Durkalski's X², and the (task, agent) pairs with rows flipped 0→1 and 1→0. And the edit of the
 * stored rewards that plants the flips.
 */
import { readFileSync, writeFileSync } from 'node:fs';

type Row = Record<string, unknown>;

/** The stored rewards, edited: every 5th row flipped, every 7th 0.5, every 11th without a reward. */
export function editRewards(path: string): void {
  const rows = readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);
  rows.forEach((r, i) => {
    if (i % 11 === 0) delete r.reward;
    else if (i % 7 === 0) r.reward = 0.5;
    else if (i % 5 === 0) r.reward = r.reward === 1 ? 0 : 1;
  });
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
}

export interface ExpectedPaired {
  rows: number;
  mean: number;
  se: number;
  up: number;
  down: number;
  x2: number | null;
}

const keyOf = (r: Row) => `${String(r._ng_task_index)}:${String(r._ng_rollout_index)}`;
const agentOf = (r: Row) => (r.agent_ref as { name: string }).name;

function expectedOf(pairs: { task: string; d: number; was: boolean; is: boolean }[]): ExpectedPaired {
  const n = pairs.length;
  const mean = pairs.reduce((s, p) => s + p.d, 0) / n;
  let v = pairs.reduce((s, p) => s + (p.d - mean) ** 2, 0) / (n * (n - 1));
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) if (i !== j && pairs[i].task === pairs[j].task) v += ((pairs[i].d - mean) * (pairs[j].d - mean)) / (n * n);
  const perTask = new Map<string, { rows: number; pf: number; fp: number }>();
  for (const p of pairs) {
    const t = perTask.get(p.task) ?? { rows: 0, pf: 0, fp: 0 };
    perTask.set(p.task, { rows: t.rows + 1, pf: t.pf + (p.was && !p.is ? 1 : 0), fp: t.fp + (!p.was && p.is ? 1 : 0) });
  }
  const ds = [...perTask.values()].map((t) => (t.pf - t.fp) / t.rows);
  const sq = ds.reduce((s, d) => s + d * d, 0);
  return {
    rows: n,
    mean,
    se: Math.sqrt(Math.max(0, v)),
    up: pairs.filter((p) => !p.was && p.is).length,
    down: pairs.filter((p) => p.was && !p.is).length,
    x2: sq === 0 ? null : ds.reduce((s, d) => s + d, 0) ** 2 / sq,
  };
}

/** Expected statistics per agent and for `all`, and the `task/agent` pairs with 0→1 and 1→0 rows. */
export function pairedExpected(
  oldRows: Row[],
  newRows: Row[],
): { stats: Record<string, ExpectedPaired>; tasksUp: string[]; tasksDown: string[] } {
  const old = new Map(oldRows.map((r) => [keyOf(r), r.reward]));
  const byAgent: Record<string, { task: string; d: number; was: boolean; is: boolean }[]> = { all: [] };
  const up = new Set<string>();
  const down = new Set<string>();
  for (const r of newRows) {
    const o = old.get(keyOf(r));
    const n = r.reward;
    if (typeof o !== 'number' || typeof n !== 'number') continue;
    const p = { task: String(r._ng_task_index), d: n - o, was: o >= 0.5, is: n >= 0.5 };
    (byAgent[agentOf(r)] ??= []).push(p);
    byAgent.all.push(p);
    if (o === 0 && n === 1) up.add(`${p.task}/${agentOf(r)}`);
    if (o === 1 && n === 0) down.add(`${p.task}/${agentOf(r)}`);
  }
  const stats = Object.fromEntries(Object.entries(byAgent).map(([a, ps]) => [a, expectedOf(ps)]));
  return { stats, tasksUp: [...up].sort(), tasksDown: [...down].sort() };
}
