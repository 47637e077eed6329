/**
 * The old verdicts (the `reward` of each row of the run's `--rollouts`, and of a recovery run's input
 * sidecar) joined with the new ones (its main output) by rollout key, in memory flat in the number
 * of rows: every keyed row becomes one small record of an external sort (`verdict-records.ts`), and
 * the sorted records are walked key by key. Memory holds the sort's budget, the paired rewards of
 * each agent (1 byte per reward when they are 0/1, else 8, for the bootstrap) and bounded lists; never a row's JSON or a
 * map of every key. Rows without both indices are skipped.
 */
import { auditKey } from '../contract/batch-audit.js';
import type { PlanOrder } from '../contract/plan-summary.js';
import { ExternalSorter } from '../io/external-sort.js';
import { taskRank } from '../planning/task-order.js';
import { withScratchDir } from '../io/scratch-dir.js';
import { NarrowColumn, type Numbers } from './number-column.js';
import { TaskRanking, total, type FlipCounts, type TaskFlips } from './task-ranking.js';
import { forEachRowVerdict, partText, type RowVerdict } from './row-verdicts.js';
import { compareVerdictRecords, heldPart, NEW, OLD, partId, verdictRecordCodec, type VerdictRecord } from './verdict-records.js';

/** Reward ≥ this is a pass (the contract's rewards are scores in [0, 1]; it names no other threshold). */
export const PASS_THRESHOLD = 0.5;
/** Old keys missing from the main output listed (`T:R`, in key order); the rest are counted. */
export const MISSING_LISTED_MAX = 100;
/** Flipped rows listed by key; the rest are counted. */
export const FLIPS_LISTED_MAX = 10_000;
/** Tasks with flips listed (most flips first); the rest are counted. */
export const TASKS_LISTED_MAX = 10_000;

export type { FlipCounts, TaskFlips };

export type FlipKind = 'up' | 'down' | 'changed';

/** 0→1 `up`, 1→0 `down`, any other different pair `changed`; null when equal or one is missing. */
export function flipOf(oldReward: number, newReward: number): FlipKind | null {
  if (Number.isNaN(oldReward) || Number.isNaN(newReward) || oldReward === newReward) return null;
  if (oldReward === 0 && newReward === 1) return 'up';
  if (oldReward === 1 && newReward === 0) return 'down';
  return 'changed';
}

/** One agent's joined verdicts: the paired rewards (same index, same key) and the counts. */
export interface AgentJoin {
  agent: string;
  /** Rows of the main output. */
  rows: number;
  /**
   * Old and new reward of the rows that have both (paired by index, in key order), in the narrowest
   * typed array that holds them exactly (number-column.ts: 1 byte a row for 0/1 rewards).
   */
  oldRewards: Numbers;
  newRewards: Numbers;
  /**
   * The task of each paired row (same index): the task's ordinal in the join's key order, shared by
   * all agents (equal ordinal, same task), for errors clustered by task.
   */
  taskIds: Numbers;
  /** Main-output rows with no old reward (key not in the old files, or no numeric reward there). */
  noOld: number;
  /** Main-output rows whose own reward is not a number. */
  noNew: number;
  flips: FlipCounts;
}

export interface FlippedRow {
  key: string;
  agent: string;
  old: number;
  new: number;
  kind: FlipKind;
}

export interface VerdictJoin {
  agents: AgentJoin[];
  /** Tasks with at least one flip, most flips first (the first TASKS_LISTED_MAX). */
  tasks: TaskFlips[];
  /** Tasks with flips beyond TASKS_LISTED_MAX (counted, not listed). */
  tasksMore: number;
  /** The first FLIPS_LISTED_MAX flipped rows, in key order. */
  flipped: FlippedRow[];
  /** Flipped rows beyond FLIPS_LISTED_MAX (counted, not listed). */
  flippedMore: number;
  /** Keys of the old files not in the main output (missing from the score). */
  oldOnly: number;
  /** The first MISSING_LISTED_MAX of them, as `T:R` in key order (the rest are counted in `oldOnly`). */
  oldOnlyKeys: string[];
  /** Keys of the old files (with both indices) and rows of the main output. */
  oldRows: number;
  newRows: number;
  /** The plan's order, and each task's place in it by task ordinal (`--order random`: its rank; file order: the file position of its first row). */
  order: PlanOrder;
  taskOrder: Numbers;
}

/** The files of a join: the old verdicts (a recovery run's input sidecar first, then --rollouts) and the main output. */
export interface VerdictFiles {
  rollouts: string;
  oldSidecar: string | null;
  output: string;
}

const noFlips = (): FlipCounts => ({ up: 0, down: 0, changed: 0 });

/** The walk over the sorted records: one key at a time, one task at a time. */
class JoinWalk {
  private readonly agents: {
    counts: Omit<AgentJoin, 'oldRewards' | 'newRewards' | 'taskIds'>;
    old: NarrowColumn;
    new: NarrowColumn;
    task: NarrowColumn;
  }[];
  private readonly ranking = new TaskRanking(TASKS_LISTED_MAX);
  private readonly flipped: FlippedRow[] = [];
  private flippedMore = 0;
  private oldRows = 0;
  private oldOnly = 0;
  private readonly oldOnlyKeys: string[] = [];
  private newRows = 0;
  /** The current key (no key yet: NaN), what its old rows said, and whether a new row took it. */
  private taskNum = NaN;
  private taskText = '';
  private rolloutNum = NaN;
  private rolloutText = '';
  private before: number | undefined = undefined;
  private taken = false;
  /** The current task's ordinal in key order (−1: none yet), and each task's place in the plan order. */
  private taskOrdinal = -1;
  // File order: record numbers, 4 bytes a task; random order: 53-bit ranks, 8.
  private readonly taskOrder = new NarrowColumn();
  /** The current task's counts per agent index. */
  private readonly taskFlips = new Map<number, TaskFlips>();

  /** `agentRows[i]`: agent i's rows in the main output, the most paired rows it can have (its columns' size). */
  constructor(
    agentNames: readonly string[],
    agentRows: readonly number[],
    private readonly order: PlanOrder,
  ) {
    this.agents = agentNames.map((agent, i) => ({
      counts: { agent, rows: 0, noOld: 0, noNew: 0, flips: noFlips() },
      old: new NarrowColumn(agentRows[i]),
      new: new NarrowColumn(agentRows[i]),
      task: new NarrowColumn(agentRows[i]),
    }));
  }

  add(r: VerdictRecord): void {
    const newTask = r.taskNum !== this.taskNum || r.taskText !== this.taskText;
    if (newTask || r.rolloutNum !== this.rolloutNum || r.rolloutText !== this.rolloutText) {
      this.endKey();
      if (newTask) {
        this.endTask();
        this.taskOrdinal++;
        const task = partId(r.taskNum, r.taskText);
        // The plan ranks a task by the text `keyId` gives its part (task-order.ts: taskOfKeyId).
        this.taskOrder.push(this.order.kind === 'random' ? taskRank(this.order.seed, JSON.stringify(task).slice(1, -1)) : r.seq);
      }
      this.taskNum = r.taskNum;
      this.taskText = r.taskText;
      this.rolloutNum = r.rolloutNum;
      this.rolloutText = r.rolloutText;
    }
    if (r.side === OLD) {
      if (this.before === undefined) this.oldRows++;
      this.before = r.reward; // the last old row of a key wins
    } else {
      this.newRow(r, this.taken ? undefined : this.before);
      this.taken = true;
    }
  }

  private endKey(): void {
    if (this.before !== undefined && !this.taken && this.oldOnly++ < MISSING_LISTED_MAX)
      this.oldOnlyKeys.push(auditKey(partText(partId(this.taskNum, this.taskText)), partText(partId(this.rolloutNum, this.rolloutText))));
    this.before = undefined;
    this.taken = false;
  }

  private endTask(): void {
    for (const t of this.taskFlips.values()) if (total(t) > 0) this.ranking.offer(t);
    this.taskFlips.clear();
  }

  /** A main-output row; `before` is its key's old reward unless an earlier row of the key took it. */
  private newRow(r: VerdictRecord, before: number | undefined): void {
    this.newRows++;
    const a = this.agents[r.agent];
    const c = a.counts;
    c.rows++;
    const noOld = before === undefined || Number.isNaN(before);
    if (noOld) c.noOld++;
    if (Number.isNaN(r.reward)) c.noNew++;
    if (noOld || Number.isNaN(r.reward)) return;
    a.old.push(before);
    a.new.push(r.reward);
    a.task.push(this.taskOrdinal);
    let t = this.taskFlips.get(r.agent);
    if (!t) this.taskFlips.set(r.agent, (t = { task: partText(partId(r.taskNum, r.taskText)), agent: c.agent, rows: 0, ...noFlips() }));
    t.rows++;
    const kind = flipOf(before, r.reward);
    if (kind === null) return;
    c.flips[kind]++;
    t[kind]++;
    if (this.flipped.length < FLIPS_LISTED_MAX)
      this.flipped.push({
        key: auditKey(t.task, partText(partId(r.rolloutNum, r.rolloutText))),
        agent: c.agent,
        old: before,
        new: r.reward,
        kind,
      });
    else this.flippedMore++;
  }

  finish(): VerdictJoin {
    this.endKey();
    this.endTask();
    const tasks = this.ranking.top();
    const agents = this.agents.map((a) => ({
      ...a.counts,
      oldRewards: a.old.take(),
      newRewards: a.new.take(),
      taskIds: a.task.take(),
    }));
    return {
      agents: agents.sort((x, y) => (x.agent < y.agent ? -1 : x.agent > y.agent ? 1 : 0)),
      tasks,
      tasksMore: this.ranking.offered - tasks.length,
      flipped: this.flipped,
      flippedMore: this.flippedMore,
      oldOnly: this.oldOnly,
      oldOnlyKeys: this.oldOnlyKeys,
      oldRows: this.oldRows,
      newRows: this.newRows,
      order: this.order,
      taskOrder: this.taskOrder.take(),
    };
  }
}

/**
 * Joins the old verdicts with the main output's, key by key: a key's last old row gives its old
 * reward, which pairs with the key's first main-output row. The sort's run files go to a fresh
 * scratch directory under `scratchParent`, removed afterwards.
 */
export async function joinVerdicts(
  files: VerdictFiles,
  scratchParent: string,
  opts: { maxRecords?: number; order?: PlanOrder } = {},
): Promise<VerdictJoin> {
  return withScratchDir(scratchParent, '.reverify-report-', async (dir) => {
    const sorter = new ExternalSorter<VerdictRecord>({
      dir,
      name: 'verdicts',
      compare: compareVerdictRecords,
      codec: verdictRecordCodec,
      maxRecords: opts.maxRecords,
    });
    const agentIds = new Map<string, number>();
    /** Main-output rows by agent id. */
    const agentRows: number[] = [];
    let seq = 0;
    const adder = (side: typeof OLD | typeof NEW) => (v: RowVerdict) => {
      let agent = 0;
      if (side === NEW) {
        agent = agentIds.get(v.agent) ?? agentIds.size;
        if (agent === agentIds.size) agentIds.set(v.agent, agent);
        agentRows[agent] = (agentRows[agent] ?? 0) + 1;
      }
      const [taskNum, taskText] = heldPart(v.task);
      const [rolloutNum, rolloutText] = heldPart(v.rollout);
      return sorter.add({ taskNum, taskText, rolloutNum, rolloutText, side, seq: seq++, reward: v.reward, agent });
    };
    try {
      if (files.oldSidecar) await forEachRowVerdict(files.oldSidecar, adder(OLD));
      await forEachRowVerdict(files.rollouts, adder(OLD));
      await forEachRowVerdict(files.output, adder(NEW));
      const walk = new JoinWalk([...agentIds.keys()], agentRows, opts.order ?? { kind: 'file' });
      for await (const chunk of sorter.sortedChunks()) for (const r of chunk) walk.add(r);
      return walk.finish();
    } finally {
      await sorter.dispose();
    }
  });
}
