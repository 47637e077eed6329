/**
 * The old verdicts (the `reward` of each row of the run's `--rollouts`) joined with the new ones
 * (its main output) by rollout key, streamed from disk: memory holds one number per old key and
 * per joined row (for the bootstrap), never a row's JSON. Rows without both indices are skipped.
 */
import { auditKey } from '../contract/batch-audit.js';
import { topLevelSpans, type Span } from '../contract/json-spans.js';
import { AGENT_REF_KEY, ROLLOUT_INDEX_KEY, TASK_INDEX_KEY } from '../contract/keys.js';
import { MemberNames } from '../io/json-line-scan.js';
import { forEachScannedLine } from '../io/scanned-lines.js';

/** The member holding a row's verdict. */
const REWARD_KEY = 'reward';
/** Reward ≥ this is a pass (the contract's rewards are scores in [0, 1]; it names no other threshold). */
export const PASS_THRESHOLD = 0.5;
/** Flipped rows listed by key; the rest are counted. */
export const FLIPS_LISTED_MAX = 10_000;

/** What one row says, read from its top-level members only. */
export interface RowVerdict {
  key: string;
  /** The key as the join's maps hold it: one number when both indices are small integers (less memory), else `key`. */
  id: number | string;
  task: string;
  agent: string;
  /** The reward as a number (true/false as 1/0), NaN when absent or not a number. */
  reward: number;
}

function rawOf(text: string, span: Span | undefined): string | undefined {
  return span ? text.slice(span.start, span.end) : undefined;
}

/** The row's key, task, agent and reward, or null for a line that is not an object with both indices. */
export function rowVerdict(text: string): RowVerdict | null {
  let spans: Map<string, Span>;
  try {
    spans = topLevelSpans(text);
  } catch {
    return null;
  }
  const raw = (key: string) => rawOf(text, spans.get(key));
  return verdictOf(raw(TASK_INDEX_KEY), raw(ROLLOUT_INDEX_KEY), raw(REWARD_KEY), raw(AGENT_REF_KEY));
}

/** A row's verdict from the raw texts of its members (`undefined`: absent); null without both indices. */
function verdictOf(
  task: string | undefined,
  rollout: string | undefined,
  rawReward: string | undefined,
  ref: string | undefined,
): RowVerdict | null {
  if (task === undefined || rollout === undefined) return null;
  let reward = NaN;
  if (rawReward !== undefined) {
    const v = JSON.parse(rawReward) as unknown;
    reward = typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : NaN;
  }
  let agent = '(no agent_ref)';
  if (ref !== undefined) {
    const name = (JSON.parse(ref) as { name?: unknown } | null)?.name;
    if (typeof name === 'string') agent = name;
  }
  return { key: auditKey(task, rollout), id: idOf(task, rollout), task: task.trim(), agent, reward };
}

/** Rollout indices below 2^21 and task indices below 2^32 pack into one exact double. */
const ROLLOUT_ID_RANGE = 2 ** 21;

/** `task · 2^21 + rollout` for plain non-negative integer indices in range; else the key text (never a number). */
export function idOf(task: string, rollout: string): number | string {
  const t = task.trim();
  const r = rollout.trim();
  if (/^\d{1,10}$/.test(t) && /^\d{1,7}$/.test(r)) {
    const ti = Number(t);
    const ri = Number(r);
    if (ti < 2 ** 32 && ri < ROLLOUT_ID_RANGE) return ti * ROLLOUT_ID_RANGE + ri;
  }
  return auditKey(t, r);
}

const VERDICT_MEMBERS = new MemberNames([TASK_INDEX_KEY, ROLLOUT_INDEX_KEY, REWARD_KEY, AGENT_REF_KEY]);

/**
 * Calls `visit` with each row of a JSONL file that has both indices, streamed. A line the byte
 * scanner vouches for is read from its members' bytes (the same raw texts `topLevelSpans` finds);
 * any other takes `rowVerdict` on its text, as before.
 */
export async function forEachRowVerdict(path: string, visit: (v: RowVerdict) => void): Promise<void> {
  await forEachScannedLine(path, VERDICT_MEMBERS, (scanned) => {
    let v: RowVerdict | null;
    if (scanned.vouched) v = verdictOf(scanned.raw(0), scanned.raw(1), scanned.raw(2), scanned.raw(3));
    else {
      const { text } = scanned.line();
      if (text.trim() === '') return;
      v = rowVerdict(text);
    }
    if (v) visit(v);
  });
}

/**
 * The old reward of every key of the `--rollouts` file (the last row of a key wins); with a
 * recovery run's input sidecar, also of the keys only it has (their last attempt's reward).
 */
export async function readOldRewards(path: string, inputSidecar: string | null = null): Promise<Map<number | string, number>> {
  const old = new Map<number | string, number>();
  const remember = (v: RowVerdict) => old.set(v.id, v.reward);
  if (inputSidecar) await forEachRowVerdict(inputSidecar, remember);
  await forEachRowVerdict(path, remember);
  return old;
}

export type FlipKind = 'up' | 'down' | 'changed';

/** 0→1 `up`, 1→0 `down`, any other different pair `changed`; null when equal or one is missing. */
export function flipOf(oldReward: number, newReward: number): FlipKind | null {
  if (Number.isNaN(oldReward) || Number.isNaN(newReward) || oldReward === newReward) return null;
  if (oldReward === 0 && newReward === 1) return 'up';
  if (oldReward === 1 && newReward === 0) return 'down';
  return 'changed';
}

export interface FlipCounts {
  up: number;
  down: number;
  changed: number;
}

/** One agent's joined verdicts: the paired rewards (same index, same key) and the counts. */
export interface AgentJoin {
  agent: string;
  /** Rows of the main output. */
  rows: number;
  /** Old and new reward of the rows that have both (paired by index). */
  oldRewards: number[];
  newRewards: number[];
  /** Main-output rows with no old reward (key not in --rollouts, or no numeric reward there). */
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

export interface TaskFlips extends FlipCounts {
  task: string;
  agent: string;
  rows: number;
}

export interface VerdictJoin {
  agents: AgentJoin[];
  /** Tasks with at least one flip, most flips first. */
  tasks: TaskFlips[];
  flipped: FlippedRow[];
  /** Flipped rows beyond FLIPS_LISTED_MAX (counted, not listed). */
  flippedMore: number;
  /** Keys of --rollouts not in the main output. */
  oldOnly: number;
  /** Rows of --rollouts (with both indices) and of the main output. */
  oldRows: number;
  newRows: number;
}

const noFlips = (): FlipCounts => ({ up: 0, down: 0, changed: 0 });
const total = (f: FlipCounts) => f.up + f.down + f.changed;

/** Streams the main output against the old rewards (consumed: the keys left in `old` are old-only). */
export async function joinVerdicts(old: Map<number | string, number>, mainOutput: string): Promise<VerdictJoin> {
  const oldRows = old.size;
  const agents = new Map<string, AgentJoin>();
  const tasks = new Map<string, TaskFlips>();
  const flipped: FlippedRow[] = [];
  let flippedMore = 0;
  let newRows = 0;
  await forEachRowVerdict(mainOutput, (v) => {
    newRows++;
    let a = agents.get(v.agent);
    if (!a) agents.set(v.agent, (a = { agent: v.agent, rows: 0, oldRewards: [], newRewards: [], noOld: 0, noNew: 0, flips: noFlips() }));
    a.rows++;
    const before = old.get(v.id);
    old.delete(v.id);
    if (before === undefined || Number.isNaN(before)) a.noOld++;
    if (Number.isNaN(v.reward)) a.noNew++;
    if (before === undefined || Number.isNaN(before) || Number.isNaN(v.reward)) return;
    a.oldRewards.push(before);
    a.newRewards.push(v.reward);
    const kind = flipOf(before, v.reward);
    const taskId = `${v.agent}\u0000${v.task}`;
    let t = tasks.get(taskId);
    if (!t) tasks.set(taskId, (t = { task: v.task, agent: v.agent, rows: 0, ...noFlips() }));
    t.rows++;
    if (kind === null) return;
    a.flips[kind]++;
    t[kind]++;
    if (flipped.length < FLIPS_LISTED_MAX) flipped.push({ key: v.key, agent: v.agent, old: before, new: v.reward, kind });
    else flippedMore++;
  });
  return {
    agents: [...agents.values()].sort((x, y) => (x.agent < y.agent ? -1 : x.agent > y.agent ? 1 : 0)),
    tasks: [...tasks.values()].filter((t) => total(t) > 0).sort((x, y) => total(y) - total(x) || Number(x.task) - Number(y.task)),
    flipped,
    flippedMore,
    oldOnly: old.size,
    oldRows,
    newRows,
  };
}
