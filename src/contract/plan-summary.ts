/**
 * What the plan phase found, counts only, and the files it read. Types only: the workflow bundle imports
 * this file, so it must not contain runtime code.
 */
import type { FileStamp } from './file-stamp.js';

/** What a file was when the plan read it (`FileStamp`): a batch refuses the file if it differs now. */
export interface FileIdentity extends FileStamp {
  path: string;
}

/**
 * The plan's order (src/planning/task-order.ts `planRank`): the file's (`--order file`), a seeded
 * permutation of tasks (`--order random`), or the largest saved rows first (`--dispatch-longest-first`).
 */
export type PlanOrder = { kind: 'file' } | { kind: 'random'; seed: number } | { kind: 'longest' };

/**
 * The run store's identity digests of a plain run's files (src/io/content-digest.ts), saved in its
 * coverage file: `--resume` refuses other files unless `--allow-unsafe`. `rollouts` is absent when
 * `--limit` stopped the plan before the file's end.
 */
export interface InputIdentity {
  inputs: string;
  rollouts?: string;
}

export interface PlanSummary {
  planPath: string;
  /**
   * Bytes per plan record (`PLAN_RECORD_BYTES`, `ATIF_PLAN_RECORD_BYTES`: records carry digests).
   * Another value, or none (plans of earlier versions), is refused (`checkPlanLayout`).
   */
  recordBytes?: number;
  /** The files the plan's offsets point into (source, inputs), as the plan read them. */
  files?: FileIdentity[];
  /** The file the plan's source offsets point into: --rollouts, its sidecar in recovery mode, or the ATIF manifest. */
  sourcePath: string;
  /** `atif`: source rows are manifest entries whose trajectories the records prove (absent: NeMo Gym rollouts). */
  inputFormat?: 'atif';
  /**
   * The plan's attempts file (src/planning/plan-attempts.ts): per row, its key's failed attempts in
   * the sidecar when the plan was made, which re-judgment plans carry on instead of reading the
   * sidecar. Absent: plans of earlier versions (`planRound` refuses them) and plans of selected saved
   * rows (activities/plan-selected.ts), which are never planned again.
   */
  attemptsPath?: string;
  /** Rows to verify. */
  rows: number;
  /**
   * Rollouts (distinct keys) the source holds within `--limit`, resume skips included: the run's
   * expected rollouts in its coverage. Absent in recovery plans (the files' keys count) and runs started before it.
   */
  keys?: number;
  /** Agent names, indexed by the plan's agent numbers. */
  agents: string[];
  /** Resources server names, indexed by the plan's server numbers. */
  servers: string[];
  /** Rows per agent name. */
  rowsPerAgent: Record<string, number>;
  /** The plan's order when not the file's: `--order random` and its seed, or `--dispatch-longest-first`. */
  order?: PlanOrder;
  /** The digests of the files a plain run was planned from (absent: recovery, ATIF, earlier versions). */
  identity?: InputIdentity;
}
