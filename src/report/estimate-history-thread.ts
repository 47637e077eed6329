/**
 * The thread the report's replay of the live estimate runs in (estimate-history-offthread.ts):
 * replays the join's paired rows it was given and posts the history.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { estimateHistoryOf, type JoinOrder } from './estimate-history.js';

const { join, confidence } = workerData as { join: JoinOrder; confidence: number };
parentPort!.postMessage(estimateHistoryOf(join, confidence));
