/**
 * The plan's key join (spec §4.5–§4.8), one key at a time: everything the files say about a key
 * arrives as one group of sorted records — whether the main output holds it, whether --rollouts
 * does (recovery), its sidecar attempts, its materialized input rows, and its source rows in file
 * order — and this decides each source row's verdict. Pure: no I/O.
 */
import { decode, Kind, planRecord, type InputFact, type SourceFact } from './key-facts.js';
import type { KeyedRecord } from './keyed-records.js';
import type { PlanRecord } from './plan-file.js';
import type { RowAttempts } from './plan-attempts.js';
import { Verdict } from './plan-verdicts.js';

export interface KeyPolicy {
  /** Recovery (§4.6.4): only the first judge failure per key that is not present is yielded. */
  recovery: boolean;
  /** `--resume` (§4.8): skip keys done, terminal or out of attempts. */
  resume: boolean;
  maxAttempts: number;
}

/** A yielded source row that stops the run, as found by the join. */
export type JoinProblem = { kind: 'shape'; message: string } | { kind: 'no-input'; offset: number; length: number; line: number };

/**
 * Where the decisions go; a planned row comes with its key's attempts in the sidecar (counted
 * whatever the policy: a re-judgment plan carries them on, and recovery plans a row whatever they are).
 */
export interface VerdictSink {
  verdict(ordinal: number, verdict: Verdict, plan?: PlanRecord, attempts?: RowAttempts): void;
  problem(ordinal: number, problem: JoinProblem): void;
  duplicate(ordinal: number, line: number, firstLine: number): void;
}

/** Decides the verdict of every source row in one key's group (records sorted by kind, then place). */
export function decideKey(group: readonly KeyedRecord[], policy: KeyPolicy, sink: VerdictSink): void {
  let output = false;
  let rollouts = false;
  let attempts = 0;
  let terminal = false;
  let input: InputFact | null = null;
  let first: SourceFact | null = null;
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
        if (decode.sidecar(n).terminal) terminal = true;
        break;
      case Kind.Input:
        input = decode.input(n);
        break;
      case Kind.Source: {
        if (policy.recovery && (output || rollouts || first !== null)) break; // not yielded
        const source = decode.source(n);
        const { ordinal } = source;
        if (r.text !== null) {
          sink.verdict(ordinal, Verdict.Error);
          sink.problem(ordinal, { kind: 'shape', message: r.text });
        } else if (input === null) {
          sink.verdict(ordinal, Verdict.Error);
          sink.problem(ordinal, { kind: 'no-input', offset: source.offset, length: source.length, line: source.line });
        } else if (first !== null) {
          sink.verdict(ordinal, Verdict.Duplicate);
          sink.duplicate(ordinal, source.line, first.line);
        } else if (policy.resume && output) {
          sink.verdict(ordinal, Verdict.SkipDone);
        } else if (policy.resume && terminal) {
          sink.verdict(ordinal, Verdict.SkipTerminal);
        } else if (policy.resume && attempts >= policy.maxAttempts) {
          sink.verdict(ordinal, Verdict.SkipMaxed);
        } else {
          sink.verdict(ordinal, Verdict.Plan, planRecord(source, input), { count: attempts, terminal });
        }
        first ??= source;
        break;
      }
    }
  }
}
