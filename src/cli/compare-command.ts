/**
 * `reverify compare A.jsonl B.jsonl [C.jsonl …] [--json] [--confidence P]`: outputs re-scored from
 * the same rollouts (e.g. by different judges), pairwise: per agent and over all agents, the mean
 * reward of each, the paired difference with its task-clustered interval, pass/fail flips and
 * agreement (src/report/output-comparison.ts). Reads the files only (no Temporal server).
 */
import { tmpdir } from 'node:os';
import { ConfigError } from '../contract/errors.js';
import { compareOutputs, type ComparedAgent, type ComparedPair, type OutputComparison } from '../report/output-comparison.js';
import { requireReadableFile } from './build-spec.js';

export interface CompareOptions {
  json?: boolean;
  confidence: number;
}

/** `+0.0100`, `−0.0500`. */
function signed(x: number): string {
  const s = x.toFixed(4);
  return x >= 0 ? `+${s}` : s.replace(/^-/, '−');
}

function plain(x: number | null): string {
  return x === null ? '–' : x.toFixed(4);
}

/** One agent's line: means, delta [lo, hi], pass-rate delta, flips, κ, McNemar's p. */
function agentLine(name: string, s: ComparedAgent): string {
  const d = s.delta;
  const delta = d ? `${signed(d.mean)} [${signed(d.lo)}, ${signed(d.hi)}]` : '– (fewer than 2 rows)';
  const pass = s.passDelta ? `${signed(s.passDelta.mean)} [${signed(s.passDelta.lo)}, ${signed(s.passDelta.hi)}]` : '–';
  const p = s.mcnemar.pValue === null ? '–' : s.mcnemar.pValue.toPrecision(3);
  const kappa = s.kappa === null ? '–' : s.kappa.toFixed(3);
  return (
    `  ${name}: mean reward ${plain(s.oldMean)} → ${plain(s.newMean)}, delta ${delta}; pass rate delta ${pass}; ` +
    `flips 0→1 ${s.passTable.fp}, 1→0 ${s.passTable.pf}; κ ${kappa}; McNemar p ${p}; ${s.rows} rows in ${s.tasks} tasks`
  );
}

function pairLines(p: ComparedPair, confidence: number): string[] {
  const level = `${Math.round(confidence * 1000) / 10}%`;
  const unshared = p.onlyA + p.onlyB > 0 ? `; not in both: ${p.onlyA} key(s) only in A, ${p.onlyB} row(s) only in B` : '';
  return [
    `B − A: A ${p.a}, B ${p.b} (${p.paired} rollouts scored in both${unshared}; ${level} task-clustered intervals)`,
    agentLine('all', p.all),
    ...p.agents.map((a) => agentLine(a.agent, a)),
  ];
}

/** The comparison as lines for people. */
export function comparisonLines(c: OutputComparison): string[] {
  return c.pairs.flatMap((p) => pairLines(p, c.confidence));
}

export async function compareCommand(
  outputs: string[],
  opts: CompareOptions,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<void> {
  if (!(opts.confidence > 0 && opts.confidence < 1))
    throw new ConfigError(`--confidence takes a level between 0 and 1, got ${opts.confidence}`);
  for (const o of outputs) await requireReadableFile('output', o);
  const c = await compareOutputs(outputs, tmpdir(), opts.confidence);
  if (opts.json) {
    comparisonLines(c).forEach(err);
    out(JSON.stringify(c));
  } else comparisonLines(c).forEach(out);
}
