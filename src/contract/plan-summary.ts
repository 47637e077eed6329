/**
 * What the plan phase found, counts only, and the files it read. Types only: the workflow bundle imports
 * this file, so it must not contain runtime code.
 */
/** What a file was when the plan read it: told in the message when a planned row has changed. */
export interface FileIdentity {
  path: string;
  size: number;
  mtimeMs: number;
}

export interface PlanSummary {
  planPath: string;
  /**
   * Bytes per plan record (`PLAN_RECORD_BYTES`: records carry checksums). Absent in the plans of
   * runs started before checksums (32-byte records whose reads are not proven).
   */
  recordBytes?: number;
  /** The files the plan's offsets point into (source, inputs), as the plan read them. */
  files?: FileIdentity[];
  /** The file the plan's source offsets point into: --rollouts, its sidecar in recovery mode, or the ATIF manifest. */
  sourcePath: string;
  /** `atif`: source rows are manifest entries whose trajectories the records prove (absent: NeMo Gym rollouts). */
  inputFormat?: 'atif';
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
}
