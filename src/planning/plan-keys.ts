/**
 * The plan's key join (spec §4.5–§4.8), one key at a time: everything the files say about a key
 * arrives as one group of sorted records — whether the main output holds it, whether --rollouts
 * does (recovery), its sidecar attempts, its materialized input rows, and its source rows in file
 * order — and this decides each source row's verdict. Pure: no I/O.
 */
import { digestAt } from '../io/line-digest.js';
import type { KeyedRecord } from './keyed-records.js';
import type { PlanRecord } from './plan-file.js';
import { Verdict } from './plan-verdicts.js';

/** Record kinds, in the order a key's group lists them (`nums[0]`). */
export const Kind = {
  /** A main-output line with this key: `[Output]`. */
  Output: 0,
  /** Recovery: a keyed line of --rollouts (present once seeded): `[Rollouts]`. */
  Rollouts: 1,
  /** A sidecar line (a failed attempt): `[Sidecar, terminal 0|1]`. */
  Sidecar: 2,
  /** A materialized input row: `[Input, line, offset, length, agent, server, digest hi, lo]`; the last one wins. */
  Input: 3,
  /** A source row: `[Source, ordinal, offset, length, line, digest hi, lo]`, `text` = its shape problem or null. */
  Source: 4,
} as const;

export interface KeyPolicy {
  /** Recovery (§4.6.4): only the first judge failure per key that is not present is yielded. */
  recovery: boolean;
  /** `--resume` (§4.8): skip keys done, terminal or out of attempts. */
  resume: boolean;
  maxAttempts: number;
}

/** A yielded source row that stops the run, as found by the join. */
export type JoinProblem = { kind: 'shape'; message: string } | { kind: 'no-input'; offset: number; length: number; line: number };

/** Where the decisions go. */
export interface VerdictSink {
  verdict(ordinal: number, verdict: Verdict, plan?: PlanRecord): void;
  problem(ordinal: number, problem: JoinProblem): void;
  duplicate(ordinal: number, line: number, firstLine: number): void;
}

/** Decides the verdict of every source row in one key's group (records sorted by kind, then place). */
export function decideKey(group: readonly KeyedRecord[], policy: KeyPolicy, sink: VerdictSink): void {
  let output = false;
  let rollouts = false;
  let attempts = 0;
  let terminal = false;
  let input: number[] | null = null;
  let first: number[] | null = null;
  for (const r of group) {
    const n = r.nums;
    switch (n[0]) {
      case Kind.Output:
        output = true;
        break;
      case Kind.Rollouts:
        rollouts = true;
        break;
      case Kind.Sidecar:
        attempts++;
        if (n[1] === 1) terminal = true;
        break;
      case Kind.Input:
        input = n;
        break;
      case Kind.Source: {
        const [, ordinal, offset, length, line] = n;
        if (policy.recovery && (output || rollouts || first !== null)) break; // not yielded
        if (r.text !== null) {
          sink.verdict(ordinal, Verdict.Error);
          sink.problem(ordinal, { kind: 'shape', message: r.text });
        } else if (input === null) {
          sink.verdict(ordinal, Verdict.Error);
          sink.problem(ordinal, { kind: 'no-input', offset, length, line });
        } else if (first !== null) {
          sink.verdict(ordinal, Verdict.Duplicate);
          sink.duplicate(ordinal, line, first[4]);
        } else if (policy.resume && output) {
          sink.verdict(ordinal, Verdict.SkipDone);
        } else if (policy.resume && terminal) {
          sink.verdict(ordinal, Verdict.SkipTerminal);
        } else if (policy.resume && attempts >= policy.maxAttempts) {
          sink.verdict(ordinal, Verdict.SkipMaxed);
        } else {
          const [, , inputOffset, inputLength, agent, server] = input;
          const plan = {
            sourceOffset: offset,
            sourceLength: length,
            sourceLine: line,
            inputOffset,
            inputLength,
            agent,
            server,
            sourceDigest: digestAt(n, 5),
            inputDigest: digestAt(input, 6),
          };
          sink.verdict(ordinal, Verdict.Plan, plan);
        }
        first ??= n;
        break;
      }
    }
  }
}
