/**
 * The facts the key joins sort (plan, ATIF plan, seeding, re-judgment, coverage), as named records, and their
 * one codec to and from the sort numbers of a `KeyedRecord` (`nums`, whose first number is the
 * kind). A key's records sort by kind, then by their numbers in order, so each join sees a key's
 * facts in the order of `Kind`: what the outputs hold before what the files to verify hold.
 * `planRecord` is the one constructor of a plan record.
 */
import { digestAt, digestHi, digestLo, digestNums, type LineDigest } from '../io/line-digest.js';
import type { PlanRecord } from './plan-file.js';

/** Every kind of fact (`nums[0]`), in the order a key's group lists them. */
export const Kind = {
  /** A main-output line has the key. */
  Output: 0,
  /** A keyed line of --rollouts (recovery: present once seeded; seeding: a line to copy). */
  Rollouts: 1,
  /** A sidecar line: a failed attempt, terminal or not. */
  Sidecar: 2,
  /** A materialized input row; in the plan, the last one wins. */
  Input: 3,
  /** A source row of the plan, `text` = its shape problem or null. */
  Source: 4,
  /** An ATIF manifest entry, `text` = its trajectory file. */
  Entry: 5,
  /** A judge-failed row of a re-judgment round, with its plan record. */
  Row: 6,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/** Where a line sits in its file (1-based `line`), and the digest of its bytes. */
export interface LinePlace {
  line: number;
  offset: number;
  length: number;
  digest: LineDigest;
}

/** The place of a line as the JSONL reader yields it. */
export function linePlace(l: { lineNo: number; offset: number; length: number; digest: LineDigest }): LinePlace {
  return { line: l.lineNo, offset: l.offset, length: l.length, digest: l.digest };
}

/** A materialized input row: its place and its route (`server` -1: unroutable, ATIF only). */
export interface InputFact extends LinePlace {
  agent: number;
  server: number;
  /** ATIF only: whether the row has a `responses_create_params` object. */
  params?: boolean;
}

/** A source row, by its ordinal among the file's non-blank lines. */
export interface SourceFact extends LinePlace {
  ordinal: number;
}

/** A trajectory file an ATIF entry names: its length, digest, and whether its projection calls tools. */
export interface TrajectoryPlace {
  length: number;
  digest: LineDigest;
  calls: boolean;
}

/** An ATIF manifest entry; `trajectory` null when the file is unreadable or invalid (already reported). */
export interface EntryFact extends SourceFact {
  trajectory: TrajectoryPlace | null;
}

/** A line of --rollouts for seeding: its place with its raw length (line end included). */
export interface CopyPlace {
  line: number;
  offset: number;
  rawLength: number;
}

/** A re-judged row: its index in the round's plan and its plan record. */
export interface RowFact {
  index: number;
  plan: PlanRecord;
}

/** The one constructor of a plan record: a source line, its input row, and (ATIF) its trajectory. */
export function planRecord(
  source: LinePlace,
  input: Pick<InputFact, 'offset' | 'length' | 'agent' | 'server' | 'digest'>,
  trajectory?: Pick<TrajectoryPlace, 'length' | 'digest'>,
): PlanRecord {
  const rec: PlanRecord = {
    sourceOffset: source.offset,
    sourceLength: source.length,
    sourceLine: source.line,
    inputOffset: input.offset,
    inputLength: input.length,
    agent: input.agent,
    server: input.server,
    sourceDigest: source.digest,
    inputDigest: input.digest,
  };
  return trajectory ? { ...rec, trajectoryLength: trajectory.length, trajectoryDigest: trajectory.digest } : rec;
}

/** The sort numbers of each fact (`[kind, ...]`). */
export const encode = {
  output: (): number[] => [Kind.Output],
  /** Recovery's present-set needs no place; seeding's copies do. */
  rollouts: (copy?: CopyPlace): number[] => (copy ? [Kind.Rollouts, copy.line, copy.offset, copy.rawLength] : [Kind.Rollouts]),
  /** `omitted` (the coverage scan's): a row the run recorded as omitted. */
  sidecar: (terminal: boolean, omitted?: boolean): number[] =>
    omitted === undefined ? [Kind.Sidecar, terminal ? 1 : 0] : [Kind.Sidecar, terminal ? 1 : 0, omitted ? 1 : 0],
  input(f: InputFact): number[] {
    const n = encode.inputAt(f.line, f.offset, f.length, f.agent, f.server, digestHi(f.digest), digestLo(f.digest));
    if (f.params !== undefined) n.push(f.params ? 1 : 0);
    return n;
  },
  source: (f: SourceFact): number[] => encode.sourceAt(f.ordinal, f.offset, f.length, f.line, digestHi(f.digest), digestLo(f.digest)),
  // The plan's hot path (a fact per line): the numbers as they are, the digest as its halves (no object, no bigint).
  // prettier-ignore
  inputAt: (line: number, offset: number, length: number, agent: number, server: number, hi: number, lo: number): number[] =>
    [Kind.Input, line, offset, length, agent, server, hi, lo],
  sourceAt: (ordinal: number, offset: number, length: number, line: number, hi: number, lo: number): number[] => [
    Kind.Source,
    ordinal,
    offset,
    length,
    line,
    hi,
    lo,
  ],
  entry(f: EntryFact): number[] {
    const t = f.trajectory;
    return [
      ...[Kind.Entry, f.ordinal, f.offset, f.length, f.line, ...digestNums(f.digest)],
      ...[t?.length ?? 0, ...digestNums(t?.digest ?? 0n), t?.calls ? 1 : 0, t ? 0 : 1],
    ];
  },
  row({ index, plan: r }: RowFact): number[] {
    const [s, i, t] = [r.sourceDigest, r.inputDigest, r.trajectoryDigest ?? 0n];
    // prettier-ignore
    return [
      Kind.Row, index, r.sourceOffset, r.sourceLength, r.sourceLine, r.inputOffset, r.inputLength, r.agent, r.server,
      digestHi(s), digestLo(s), digestHi(i), digestLo(i), r.trajectoryLength ?? -1, digestHi(t), digestLo(t),
    ];
  },
};

/** Each fact back from its sort numbers (`n[0]` is its kind). */
export const decode = {
  sidecar: (n: readonly number[]): { terminal: boolean; omitted: boolean } => ({ terminal: n[1] === 1, omitted: n[2] === 1 }),
  copy: (n: readonly number[]): CopyPlace => ({ line: n[1], offset: n[2], rawLength: n[3] }),
  input(n: readonly number[]): InputFact {
    const f: InputFact = { line: n[1], offset: n[2], length: n[3], agent: n[4], server: n[5], digest: digestAt(n, 6) };
    return n.length > 8 ? { ...f, params: n[8] === 1 } : f;
  },
  source: (n: readonly number[]): SourceFact => ({ ordinal: n[1], offset: n[2], length: n[3], line: n[4], digest: digestAt(n, 5) }),
  entry(n: readonly number[]): EntryFact {
    const trajectory = n[11] === 1 ? null : { length: n[7], digest: digestAt(n, 8), calls: n[10] === 1 };
    return { ...decode.source(n), trajectory };
  },
  row(n: readonly number[]): RowFact {
    const source = { offset: n[2], length: n[3], line: n[4], digest: digestAt(n, 9) };
    const input = { offset: n[5], length: n[6], agent: n[7], server: n[8], digest: digestAt(n, 11) };
    const trajectory = n[13] < 0 ? undefined : { length: n[13], digest: digestAt(n, 14) };
    return { index: n[1], plan: planRecord(source, input, trajectory) };
  },
};
