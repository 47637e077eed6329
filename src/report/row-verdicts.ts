/**
 * What each row of a JSONL file says for the report's verdict join: its key's parts, its agent and
 * its reward, read from the row's top-level members only (never a parse of the whole row).
 */
import { topLevelSpans, type Span } from '../contract/json-spans.js';
import { AGENT_REF_KEY, ROLLOUT_INDEX_KEY, TASK_INDEX_KEY } from '../contract/keys.js';
import { rawPartId } from '../contract/row-key.js';
import { MemberNames } from '../contract/json-line-scan.js';
import { forEachScannedLine } from '../io/scanned-lines.js';

/** The member holding a row's verdict. */
const REWARD_KEY = 'reward';

/** What one row says, read from its top-level members only. */
export interface RowVerdict {
  /** The key's parts as `rawPartId` gives them: `1`, `1.0` and `true` are one part, as in Python. */
  task: string;
  rollout: string;
  agent: string;
  /** The reward as a number (true/false as 1/0), NaN when absent or not a number. */
  reward: number;
}

function rawOf(text: string, span: Span | undefined): string | undefined {
  return span ? text.slice(span.start, span.end) : undefined;
}

/** The row's key, agent and reward, or null for a line that is not an object with both indices. */
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
  rawTask: string | undefined,
  rawRollout: string | undefined,
  rawReward: string | undefined,
  ref: string | undefined,
): RowVerdict | null {
  if (rawTask === undefined || rawRollout === undefined) return null;
  const task = rawPartId(rawTask);
  const rollout = rawPartId(rawRollout);
  if (task === null || rollout === null || task === 'z' || rollout === 'z') return null;
  return { task, rollout, agent: ref === undefined ? NO_AGENT : agentOf(ref), reward: rawReward === undefined ? NaN : rewardOf(rawReward) };
}

const NO_AGENT = '(no agent_ref)';

/** A reward's raw text as a number (true/false as 1/0), NaN when not a number. */
function rewardOf(raw: string): number {
  if (raw === '0') return 0;
  if (raw === '1') return 1;
  const v = JSON.parse(raw) as unknown;
  return typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : NaN;
}

/** Agent names by the raw text of `agent_ref` (a run has a few): parsed once each, up to a bound. */
const agentsByRef = new Map<string, string>();
const AGENT_REFS_CACHED = 256;

function agentOf(ref: string): string {
  let agent = agentsByRef.get(ref);
  if (agent !== undefined) return agent;
  const name = (JSON.parse(ref) as { name?: unknown } | null)?.name;
  agent = typeof name === 'string' ? name : NO_AGENT;
  if (agentsByRef.size < AGENT_REFS_CACHED) agentsByRef.set(ref, agent);
  return agent;
}

/** A key part as the report shows it: a number as written, a string in JSON quotes. */
export function partText(part: string): string {
  return part.startsWith('s') ? JSON.stringify(part.slice(1)) : part;
}

const VERDICT_MEMBERS = new MemberNames([TASK_INDEX_KEY, ROLLOUT_INDEX_KEY, REWARD_KEY, AGENT_REF_KEY]);

/**
 * Calls `visit` with each row of a JSONL file that has both indices, streamed (awaiting what it
 * returns). A line the byte scanner vouches for is read from its members' bytes (the same raw texts
 * `topLevelSpans` finds); any other takes `rowVerdict` on its text.
 */
export async function forEachRowVerdict(path: string, visit: (v: RowVerdict) => Promise<void> | undefined | void): Promise<void> {
  await forEachScannedLine(path, VERDICT_MEMBERS, (scanned) => {
    let v: RowVerdict | null;
    if (scanned.vouched) v = verdictOf(scanned.raw(0), scanned.raw(1), scanned.raw(2), scanned.raw(3));
    else {
      const { text } = scanned.line();
      if (text.trim() === '') return;
      v = rowVerdict(text);
    }
    return v ? visit(v) : undefined;
  });
}
