/**
 * The ATIF plan's one-to-one checks, on records sorted by key (flat memory): each manifest entry
 * joins exactly one materialized input row, no key, input key, trajectory file, content or
 * identity appears twice. Every problem is offered with its place (entry ordinal, rank: atif-entry.ts)
 * so the run reports the one NeMo Gym 0.7.0 would meet first.
 */
import { formatKey } from '../contract/row-key.js';
import { groupsOf, type ExternalSorter } from '../io/external-sort.js';
import { Rank } from './atif-entry.js';
import { decode, Kind, planRecord } from './key-facts.js';
import type { KeyedRecord } from './keyed-records.js';
import type { PlanRecord } from './plan-file.js';

/** The first problem by (position, rank): what 0.7.0, checking in order, would raise. */
export class FirstProblem {
  private at: [number, number] = [Infinity, Infinity];
  message: string | null = null;
  offer(position: number, rank: number, message: string): void {
    if (position < this.at[0] || (position === this.at[0] && rank < this.at[1])) {
      this.at = [position, rank];
      this.message = message;
    }
  }
}

/** A planned row, at its entry's ordinal, with what the preflight needs of it. */
export interface JoinedRow {
  ordinal: number;
  record: PlanRecord;
  functionCalls: boolean;
  /** Why its input row has no resources server, or null. */
  unroutable: string | null;
}

/**
 * Joins entries with input rows. Problems go to `entries` (by entry) or `inputs` (a repeated input
 * key, by input line); joined rows to `keep`. `place(line)` names a manifest line in messages.
 */
export async function joinEntries(
  sorted: ExternalSorter<KeyedRecord>,
  place: (line: number) => string,
  inputsPath: string,
  problems: { entries: FirstProblem; inputs: FirstProblem },
  keep: (row: JoinedRow) => Promise<void>,
): Promise<void> {
  for await (const group of groupsOf(sorted.sorted(), (r) => r.key)) {
    const inputs = group.filter((r) => r.nums[0] === Kind.Input).map((r) => ({ fact: decode.input(r.nums), text: r.text }));
    const entries = group.filter((r) => r.nums[0] === Kind.Entry).map((r) => ({ fact: decode.entry(r.nums), text: r.text }));
    const key = JSON.parse(group[0].key) as [string, string];
    const shown = formatKey({ task: Number(key[0]), rollout: Number(key[1]) });
    if (inputs.length > 1) {
      const { line } = inputs[1].fact;
      problems.inputs.offer(line, 0, `${inputsPath}:${line}: duplicate materialized input key ${shown}`);
    }
    for (const [k, { fact: e, text: file }] of entries.entries()) {
      const { ordinal, line, trajectory } = e;
      if (k > 0) {
        problems.entries.offer(ordinal, Rank.RepeatedKey, `${place(line)}: manifest maps materialized rollout ${shown} more than once`);
        continue;
      }
      const input = inputs[0];
      if (input === undefined) {
        problems.entries.offer(ordinal, Rank.NoInput, `${place(line)}: manifest entry ${file} has no matching materialized input ${shown}`);
        continue;
      }
      if (trajectory === null) continue;
      const { fact: i } = input;
      if (!i.params) {
        problems.entries.offer(ordinal, Rank.NoParams, `${place(line)}: materialized input has no responses_create_params object`);
        continue;
      }
      const record = planRecord(e, { ...i, server: Math.max(i.server, 0) }, trajectory);
      await keep({ ordinal, record, functionCalls: trajectory.calls, unroutable: i.server < 0 ? input.text : null });
    }
  }
}

/** The repeated-path, -content and -identity checks: records `{key: kind + value, nums: [ordinal, rank, line]}`. */
export async function findRepeats(
  sorted: ExternalSorter<KeyedRecord>,
  place: (line: number) => string,
  problems: FirstProblem,
): Promise<void> {
  const what: Record<number, (v: string) => string> = {
    [Rank.RepeatedPath]: (v) => `manifest uses ATIF source path ${v} more than once`,
    [Rank.RepeatedContent]: (v) => `manifest uses ATIF source content ${v} more than once`,
    [Rank.RepeatedIdentity]: (v) => `manifest repeats ATIF trajectory identity ${v}`,
  };
  for await (const group of groupsOf(sorted.sorted(), (r) => r.key)) {
    if (group.length < 2) continue;
    const [ordinal, rank, line] = group[1].nums;
    problems.offer(ordinal, rank, `${place(line)}: ${what[rank](group[1].key.slice(1))}`);
  }
}

/** A kept row's plan record through JSON: its digests (bigints) as decimal text, and back. */
const DIGEST_FIELDS = new Set(['sourceDigest', 'inputDigest', 'trajectoryDigest']);

export function joinedRowText(row: JoinedRow): string {
  return JSON.stringify(row, (_key: string, v: unknown): unknown => (typeof v === 'bigint' ? String(v) : v));
}

export function joinedRowOf(text: string): JoinedRow {
  return JSON.parse(text, (key: string, v: unknown): unknown =>
    DIGEST_FIELDS.has(key) && typeof v === 'string' ? BigInt(v) : v,
  ) as JoinedRow;
}
