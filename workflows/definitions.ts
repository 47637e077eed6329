import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { Progress, RunResult, RunSpec } from '../src/contract/run-spec.js';
import type { RunState } from './run-state.js';

/** The workflow's signature (reverify-run.ts), for continue-as-new without importing it. */
export type ReverifyRunWorkflow = (spec: RunSpec, carried?: RunState) => Promise<RunResult>;

/** Progress of a run: phase, counts per agent, messages for the user. */
export const progressQuery = defineQuery<Progress>('progress');

/** Changes the run's `/verify` concurrency ceiling while it runs. Returns the new value. */
export const setConcurrencyUpdate = defineUpdate<number, [number]>('setConcurrency');

/** Pauses (true) or resumes (false) a live run: no new batch starts while paused. */
export const setPausedUpdate = defineUpdate<boolean, [boolean]>('setPaused');

/** Sets the run's budget of `/verify` requests (`--max-requests`): raising a spent one resumes the run. */
export const setMaxRequestsUpdate = defineUpdate<number, [number]>('setMaxRequests');

/** Task queue that workers of every machine poll. */
export const TASK_QUEUE = 'reverify';
