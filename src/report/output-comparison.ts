/**
 * `reverify compare`: several outputs re-scored from the same rollouts (e.g. by two or three
 * judges), compared pairwise. For each pair (A, B), in the order given, the rows are joined by
 * rollout key (verdict-join.ts, A in the place of the old verdicts) and, per agent (B's
 * `agent_ref.name`) and over all agents: the mean reward of each, the paired difference B − A with
 * its task-clustered interval (paired-stats.ts, Miller 2024), the same on pass/fail, the flips,
 * Cohen's κ on pass/fail and the clustered McNemar test. Outputs that share no key with a reward in
 * both are refused: they were not scored from the same rollouts.
 */
import { resolve } from 'node:path';
import { ConfigError } from '../contract/errors.js';
import { pairedStatsOf, type PairedStats } from './paired-stats.js';
import { passTableOf } from './report-data.js';
import { cohensKappa, type PassTable } from './stats.js';
import { joinVerdicts, type AgentJoin } from './verdict-join.js';

/** One agent's (or all agents') comparison of a pair. */
export interface ComparedAgent extends PairedStats {
  passTable: PassTable;
  kappa: number | null;
}

export interface ComparedPair {
  /** The first output (A) and the second (B): the difference is B − A. */
  a: string;
  b: string;
  /** Rows with a reward in both. */
  paired: number;
  /** Keys of A not in B; rows of B whose key has no reward in A. */
  onlyA: number;
  onlyB: number;
  agents: ComparedAgent[];
  all: ComparedAgent;
}

export interface OutputComparison {
  confidence: number;
  outputs: string[];
  pairs: ComparedPair[];
}

function sumTables(ts: PassTable[]): PassTable {
  return ts.reduce((s, t) => ({ pp: s.pp + t.pp, pf: s.pf + t.pf, fp: s.fp + t.fp, ff: s.ff + t.ff }), { pp: 0, pf: 0, fp: 0, ff: 0 });
}

function withAgreement(stats: PairedStats, passTable: PassTable): ComparedAgent {
  return { ...stats, passTable, kappa: cohensKappa(passTable) };
}

/** The comparison of outputs `a` and `b` (absolute paths): B − A. */
export async function comparePair(a: string, b: string, scratchParent: string, confidence: number): Promise<ComparedPair> {
  const join = await joinVerdicts({ rollouts: a, oldSidecar: null, output: b }, scratchParent);
  const stats = pairedStatsOf(join, confidence);
  const tables = join.agents.map((x: AgentJoin) => passTableOf(x.oldRewards, x.newRewards));
  const paired = stats.all.rows;
  if (paired === 0)
    throw new ConfigError(
      `'${a}' and '${b}' share no rollout key (_ng_task_index, _ng_rollout_index) with a reward in both: ` +
        'compare outputs re-scored from the same rollouts (e.g. `reverify run` with two judges on the same --rollouts)',
    );
  return {
    a,
    b,
    paired,
    onlyA: join.oldOnly,
    onlyB: join.agents.reduce((s, x) => s + x.noOld, 0),
    agents: stats.agents.map((s, i) => withAgreement(s, tables[i])),
    all: withAgreement(stats.all, sumTables(tables)),
  };
}

/** Every pair of `outputs` (i before j, in the order given). */
export async function compareOutputs(outputs: readonly string[], scratchParent: string, confidence: number): Promise<OutputComparison> {
  const paths = outputs.map((p) => resolve(p));
  if (paths.length < 2) throw new ConfigError('compare takes two or more outputs, e.g. `reverify compare judge_a.jsonl judge_b.jsonl`');
  const twice = paths.find((p, i) => paths.indexOf(p) !== i);
  if (twice !== undefined) throw new ConfigError(`'${twice}' is given twice: compare different outputs`);
  const pairs: ComparedPair[] = [];
  for (let i = 0; i < paths.length; i++)
    for (let j = i + 1; j < paths.length; j++) pairs.push(await comparePair(paths[i], paths[j], scratchParent, confidence));
  return { confidence, outputs: paths, pairs };
}
