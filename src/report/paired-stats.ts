/**
 * The report's post-hoc paired statistics, per agent and over all agents, from the verdict join:
 * the paired difference new − old of the mean reward and of the pass rate, with standard errors and
 * intervals clustered by task (Miller 2024, src/stats/clustered.ts), and Durkalski's clustered
 * McNemar test of the pass/fail flips (src/stats/mcnemar-clustered.ts). A task is one task index:
 * over all agents, the rows of one task under every agent are one cluster (they share its difficulty).
 * `pairedDifferencesOfFiles` is the one way to get them from a run's files (the report, the gates of
 * `--fail-if` and the comparison of outputs use it).
 */
import { pairedDifference, type ClusteredMean } from '../stats/clustered.js';
import { clusteredMcNemarOf, type ClusteredMcNemar } from '../stats/mcnemar-clustered.js';
import { concatNumbers, indicators, type Numbers } from './number-column.js';
import { mean } from './stats.js';
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

const passes = (xs: Numbers) => indicators(xs, (x) => x >= PASS_THRESHOLD);

function statsOf(agent: string, p: Paired, confidence: number): PairedStats {
  const n = p.oldRewards.length;
  const oldPass = passes(p.oldRewards);
  const newPass = passes(p.newRewards);
  const mcnemar = clusteredMcNemarOf(oldPass, newPass, p.taskIds);
  return {
    agent,
    rows: n,
    tasks: mcnemar.tasks,
    oldMean: mean(p.oldRewards),
    newMean: mean(p.newRewards),
    delta: pairedDifference(p.oldRewards, p.newRewards, p.taskIds, confidence),
    passDelta: pairedDifference(oldPass, newPass, p.taskIds, confidence),
    mcnemar,
  };
}

/** Every agent's paired rows, one after another (task ids are shared by agents: a task is one cluster). */
function allOf(agents: readonly Paired[]): Paired {
  return {
    oldRewards: concatNumbers(agents.map((a) => a.oldRewards)),
    newRewards: concatNumbers(agents.map((a) => a.newRewards)),
    taskIds: concatNumbers(agents.map((a) => a.taskIds)),
  };
}

/** The paired statistics of a verdict join, per agent (in the join's order) and over all agents. */
export function pairedStatsOf(join: Pick<VerdictJoin, 'agents'>, confidence = REPORT_CONFIDENCE): PairedReport {
  return {
    confidence,
    agents: join.agents.map((a) => statsOf(a.agent, a, confidence)),
    all: statsOf('all', allOf(join.agents), confidence),
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
