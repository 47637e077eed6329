/**
 * The thread of the count of a plan's units (count-paired-units.ts): counts the plan rows it is
 * given, posting how many it has done after each chunk, then its count (on failure, nothing: the
 * caller counts those rows itself and meets the same trouble there, with its own message).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { countSegment, type CountedPlan } from './count-paired-units/segment.js';

const { plan, from, to } = workerData as { plan: CountedPlan; from: number; to: number };
countSegment(plan, from, to, (rows) => parentPort!.postMessage({ rows })).then(
  (segment) => parentPort!.postMessage({ segment }),
  () => process.exit(1),
);
