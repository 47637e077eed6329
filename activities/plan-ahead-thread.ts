/**
 * The thread a plan made ahead runs in (plan-ahead.ts): plans its request (`planInto`) and posts
 * the outcome, or null when planning failed (the plan activity then plans itself and reports why).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { planInto, type PlanRequest } from './plan-run/plan-into.js';

planInto(workerData as PlanRequest).then(
  (outcome) => parentPort!.postMessage(outcome),
  () => parentPort!.postMessage(null),
);
