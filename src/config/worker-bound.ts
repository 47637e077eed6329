/**
 * How many worker processes `reverify run --workers N` may start on this machine. A worker is a
 * Node process with its own event loop, HTTP pool and Temporal core: it adds capacity while it has
 * a share of a core and memory for its heap, and only overhead beyond that. The bound is the
 * smaller of:
 *
 * - `WORKERS_PER_CORE` per core (`os.availableParallelism()`): a worker driving a slow judge waits
 *   on the network most of the time, so a few share a core; more only compete for it;
 * - the memory available (`os.freemem()`, Linux's MemAvailable) over `WORKER_RSS_MIB`, the largest
 *   peak RSS of one worker measured (bench/scale.ts: 316–480 MiB at 10^4–10^6 rows).
 */
import { availableParallelism, freemem } from 'node:os';
import { ConfigError } from '../contract/errors.js';

export const WORKERS_PER_CORE = 4;
export const WORKER_RSS_MIB = 480;

export interface MachineShape {
  cores: number;
  availableBytes: number;
}

/** The machine this process runs on. */
export function thisMachine(): MachineShape {
  return { cores: availableParallelism(), availableBytes: freemem() };
}

/** The most worker processes `machine` holds (at least 1: the command's own). */
export function workerBound(machine: MachineShape): number {
  const byCores = machine.cores * WORKERS_PER_CORE;
  const byMemory = Math.floor(machine.availableBytes / (WORKER_RSS_MIB * 2 ** 20));
  return Math.max(1, Math.min(byCores, byMemory));
}

/** Throws a one-line ConfigError when `workers` exceeds what `machine` holds. */
export function checkWorkerBound(workers: number, machine: MachineShape = thisMachine()): void {
  const bound = workerBound(machine);
  if (workers <= bound) return;
  const gib = (machine.availableBytes / 2 ** 30).toFixed(1);
  throw new ConfigError(
    `--workers ${workers}: this machine holds at most ${bound} worker processes (${WORKERS_PER_CORE} per core on ${machine.cores} core(s), ` +
      `and ${gib} GiB available / ${WORKER_RSS_MIB} MiB per worker); pass --workers ${bound} or fewer, ` +
      'or run `reverify worker` on more machines (docs/operating.md)',
  );
}
