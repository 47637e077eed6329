/**
 * The plan's order, decided here (`planRank`) for every order. `--order file`: file order.
 * `--dispatch-longest-first` (the seed's `dispatch_longest_first`): the largest saved rows first,
 * by the byte length of the row the run verifies (its line in `--rollouts`, or the sidecar's in
 * recovery: the saved answer, messages and trajectory the verifier reads, which is what makes a
 * judge slow), ties in file order; rows, not tasks: a task's rollouts may be apart.
 *
 * `--order random`: the plan as a seeded permutation of tasks. Each task (`_ng_task_index`) gets a
 * rank, a keyed hash of (seed, task); the plan lists rows by (rank, file order), so all rollouts
 * of a task stay together, in their file order, and the same seed gives the same plan. The rank is
 * computed per key, with no table of tasks: the permutation goes through the external sort, in
 * memory flat in the number of rows. Two tasks whose 53-bit ranks collide would interleave (odds
 * about n² / 2^54 for n tasks); that breaks no guarantee, only the grouping of those two.
 */
import type { PlanOrder } from '../contract/plan-summary.js';
import type { PlanRecord } from './plan-file.js';

export type { PlanOrder };

/** A seed for a new run (`--order random` without `--seed`). */
export function newOrderSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}

/** murmur3's finalizer: a 32-bit avalanche. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 32-bit hash of `text` keyed by `seed` (FNV-1a steps, then `fmix32`). */
function hash32(text: string, seed: number): number {
  let h = fmix32(seed ^ 0x9e3779b9);
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return fmix32(h ^ text.length);
}

/**
 * The task part of a key id (`keyId`: `["<task>","<rollout>"]`), as it is written there: the first
 * `","` is the separator (a quote inside a part is escaped, `\"`).
 */
export function taskOfKeyId(id: string): string {
  return id.slice(2, id.indexOf('","'));
}

/** The rank of a task under `seed`: an integer in [0, 2^53), exact as a double. */
export function taskRank(seed: number, task: string): number {
  const hi = hash32(task, seed) >>> 11; // 21 bits
  const lo = hash32(task, seed ^ 0x5bd1e995); // 32 bits
  return hi * 2 ** 32 + lo;
}

/**
 * A planned row's rank under `order`: the plan lists rows by (rank, file order). The one place the
 * order of dispatch is decided (the spec's options become a `PlanOrder` in workflows/plan-request.ts).
 */
export function planRank(order: PlanOrder, keyId: string, row: Pick<PlanRecord, 'sourceLength'>): number {
  switch (order.kind) {
    case 'file':
      return 0;
    case 'random':
      return taskRank(order.seed, taskOfKeyId(keyId));
    case 'longest':
      return -row.sourceLength;
  }
}
