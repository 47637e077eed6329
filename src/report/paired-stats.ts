/**
 * The report's post-hoc paired statistics, per agent and over all agents, from the verdict join:
 * the paired difference new − old of the mean reward and of the pass rate, with standard errors and
 * intervals clustered by task (Miller 2024, src/stats/clustered.ts), and Durkalski's clustered
 * McNemar test of the pass/fail flips (src/stats/mcnemar-clustered.ts). A task is one task index:
 * over all agents, the rows of one task under every agent are one cluster (they share its difficulty).
 * `pairedDifferencesOfFiles` is the one way to get them from a run's files (the report, the gates of
 * `--fail-if` and the comparison of outputs use it).
 */
import { clusteredMeanOfRuns, type ClusteredMean, type PairedPart, type RowValue } from '../stats/clustered.js';
import { clusteredMcNemarOfRuns, type ClusteredMcNemar } from '../stats/mcnemar-clustered.js';
import { joinVerdicts, PASS_THRESHOLD, type AgentJoin, type VerdictFiles, type VerdictJoin } from './verdict-join.js';

/** The report's confidence for its clustered intervals (the bootstrap's level). */
export const REPORT_CONFIDENCE = 0.95;

/** One agent's (or all agents') paired statistics. */
export interface PairedStats {
  /** The agent's name; `all` for every agent together. */
  agent: string;
  /** Rows with an old and a new reward, and their tasks. */
  rows: number;
  tasks: number;
  /** Mean reward before and after (null: no paired rows). */
  oldMean: number | null;
  newMean: number | null;
  /** The paired difference new − old of the reward, clustered by task (null: fewer than 2 rows). */
  delta: ClusteredMean | null;
  /** The same on pass/fail (reward ≥ the pass threshold): the change in pass rate. */
  passDelta: ClusteredMean | null;
  /** Durkalski's clustered McNemar test of the pass/fail flips. */
  mcnemar: ClusteredMcNemar;
}

export interface PairedReport {
  confidence: number;
  agents: PairedStats[];
  all: PairedStats;
}

type Paired = Pick<AgentJoin, 'oldRewards' | 'newRewards' | 'taskIds'>;

const passes = (x: number) => x >= PASS_THRESHOLD;
/** The paired difference of a row: new − old. */
export const difference: RowValue = (o, n) => n - o;
/** The same on pass/fail: 1 (0→1), −1 (1→0) or 0. */
const passDifference: RowValue = (o, n) => (passes(n) ? 1 : 0) - (passes(o) ? 1 : 0);

/** The mean of `lists`' values one after another (null: none). */
function meanOf(lists: readonly ArrayLike<number>[]): number | null {
  let n = 0;
  let sum = 0;
  for (const xs of lists) {
    for (let i = 0; i < xs.length; i++) sum += xs[i];
    n += xs.length;
  }
  return n === 0 ? null : sum / n;
}

/**
 * The statistics of the paired rows of `parts` (one agent's, or every agent's one after another);
 * `delta` is the clustered mean of `value(old, new)`. Read in place: no row is copied, and the
 * clusters (tasks, non-decreasing within each agent's rows: the join's key order) are read as runs.
 */
function statsOf(agent: string, parts: readonly PairedPart[], confidence: number, value: RowValue): PairedStats {
  const mcnemar = clusteredMcNemarOfRuns(parts, passes);
  return {
    agent,
    rows: parts.reduce((n, p) => n + p.oldValues.length, 0),
    tasks: mcnemar.tasks,
    oldMean: meanOf(parts.map((p) => p.oldValues)),
    newMean: meanOf(parts.map((p) => p.newValues)),
    delta: clusteredMeanOfRuns(parts, value, confidence),
    passDelta: clusteredMeanOfRuns(parts, passDifference, confidence),
    mcnemar,
  };
}

const partOf = (a: Paired): PairedPart => ({ oldValues: a.oldRewards, newValues: a.newRewards, clusters: a.taskIds });

/**
 * The paired statistics of a verdict join, per agent (in the join's order) and over all agents
 * (a task under several agents is one cluster). `value` gives `delta`'s per-row value (default the
 * paired difference; the gates of `--fail-if` ask for others: gate-numbers.ts).
 */
export function pairedStatsOf(
  join: Pick<VerdictJoin, 'agents'>,
  confidence = REPORT_CONFIDENCE,
  value: RowValue = difference,
): PairedReport {
  const parts = join.agents.map(partOf);
  return {
    confidence,
    agents: join.agents.map((a, i) => statsOf(a.agent, [parts[i]], confidence, value)),
    all: statsOf('all', parts, confidence, value),
  };
}

/**
 * The paired difference new − old per agent and over all agents, from a run's files: the old
 * verdicts (`rollouts`, and a recovery run's input sidecar) joined with the main output by key
 * (scratch files of the join under `scratchParent`), at `confidence`.
 */
export async function pairedDifferencesOfFiles(
  files: VerdictFiles,
  scratchParent: string,
  confidence = REPORT_CONFIDENCE,
): Promise<PairedReport> {
  return pairedStatsOf(await joinVerdicts(files, scratchParent), confidence);
}
