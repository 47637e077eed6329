/**
 * How far V8 lets a heap grow past what its last full collection kept, in every reverify process
 * (the CLI, `reverify worker`, the in-process worker of `reverify run`, their workflow threads).
 *
 * V8's default factor is up to ×4 on a machine with more than ~2 GiB for the heap (it scales with
 * the heap's size limit, which scales with the machine's memory): a worker whose main heap kept
 * 50 MiB grew to ~100 MiB before collecting, and its workflow thread's likewise, so the worker's
 * RSS reached 310–370 MiB at 10^5 rows where 230–280 MiB were in use (bench/README.md, "scale.ts").
 * A fixed ×2 keeps the heaps near what they hold, at a few more full collections, without the
 * hard cap that `--max-old-space-size` would be (a phase that needs more memory still gets it).
 * V8 reads the flag each time it sets a heap's next limit, so setting it once the process runs
 * applies to the main heap from its next collection on and to every thread started after.
 */
import { setFlagsFromString } from 'node:v8';

/** The heap grows to (1 + this / 100) × what the last full collection kept before the next one. */
export const HEAP_GROWING_PERCENT = 100;

/** The V8 flags set (by `limitHeapGrowth`). */
export const HEAP_GROWTH_FLAGS = [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`] as const;

/** Sets `HEAP_GROWTH_FLAGS` for this process (`set`: V8's setter, replaced in tests). */
export function limitHeapGrowth(set: (flag: string) => void = setFlagsFromString): void {
  for (const flag of HEAP_GROWTH_FLAGS) set(flag);
}
