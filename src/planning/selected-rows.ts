/**
 * Which saved (scored) rows of an output are re-verified from their saved answer: the one selection
 * behind `--noise-sample N` (a seeded random sample of the rows this run scored) and
 * `--rejudge-saved` (the rows of chosen keys, or all). Pure: the activity (activities/plan-selected.ts)
 * streams the files through it.
 */
import { taskRank } from './task-order.js';

/** What is selected: `sample` draws `rows` of the candidates by `seed`; `keys` takes those keys (by `keyId`), or all. */
export type Selection = { kind: 'sample'; rows: number; seed: number } | { kind: 'keys'; keys: string[] | 'all' };

/** A saved row that may be selected: its key, where it is, and its reward (null: not a number). */
export interface Candidate {
  key: string;
  offset: number;
  length: number;
  line: number;
  digest: bigint;
  reward: number | null;
  /** Why it cannot be re-verified from its saved answer (`savedRowProblem`); null: it can. */
  problem: string | null;
}

/** A key id (`keyId`) as `T:R`, the way messages name keys (a string part quoted). */
export function keyIdText(id: string): string {
  const parts = JSON.parse(id) as [string, string];
  return parts.map((p) => (p.startsWith('s') ? JSON.stringify(p.slice(1)) : p)).join(':');
}

/**
 * The seeded sample: each candidate's rank is a keyed hash of (seed, key) (`taskRank`, the hash of
 * `--order random`), and the `rows` smallest ranks are kept: a uniform sample without replacement,
 * the same for the same seed and rows whatever their order in the file, in memory O(rows).
 */
class BottomRanks {
  private readonly kept: Array<{ rank: number; c: Candidate }> = [];
  constructor(
    private readonly rows: number,
    private readonly seed: number,
  ) {}

  offer(c: Candidate): void {
    if (this.rows <= 0) return;
    const rank = taskRank(this.seed, c.key);
    const k = this.kept;
    if (k.length === this.rows && rank >= k[k.length - 1].rank) return;
    let at = k.length;
    while (at > 0 && k[at - 1].rank > rank) at--;
    k.splice(at, 0, { rank, c });
    if (k.length > this.rows) k.pop();
  }

  chosen(): Candidate[] {
    return this.kept.map((x) => x.c);
  }
}

/** Takes candidates in file order; `chosen()` gives the selected ones in file order, and keys asked for but not seen. */
export class RowSelector {
  private readonly sample: BottomRanks | null;
  private readonly byKey = new Map<string, Candidate>();
  private readonly wanted: Set<string> | null;

  constructor(readonly selection: Selection) {
    this.sample = selection.kind === 'sample' ? new BottomRanks(selection.rows, selection.seed) : null;
    this.wanted = selection.kind === 'keys' && selection.keys !== 'all' ? new Set(selection.keys) : null;
  }

  /** A candidate row; a key seen twice keeps its first row (an output holds each key once). */
  offer(c: Candidate): void {
    if (this.sample) {
      if (c.problem === null) this.sample.offer(c);
      return;
    }
    if (this.wanted !== null && !this.wanted.has(c.key)) return;
    if (!this.byKey.has(c.key)) this.byKey.set(c.key, c);
  }

  /** The rows selected that can be re-verified, in file order. */
  chosen(): Candidate[] {
    const rows = this.sample ? this.sample.chosen() : [...this.byKey.values()].filter((c) => c.problem === null);
    return rows.sort((a, b) => a.offset - b.offset);
  }

  /** The rows `--rejudge-saved` selected that cannot be re-verified (a failure row, no saved answer), in file order. */
  refused(): Candidate[] {
    return [...this.byKey.values()].filter((c) => c.problem !== null).sort((a, b) => a.offset - b.offset);
  }

  /** Keys asked for by `--rejudge-saved` that no saved row holds. */
  missing(): string[] {
    return this.wanted === null ? [] : [...this.wanted].filter((k) => !this.byKey.has(k));
  }
}
