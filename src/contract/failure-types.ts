/**
 * The failure types of the run, declared once: activities throw them, the workflow decides by
 * them what retrying cannot fix, and the CLI maps them to exit statuses. Pure constants: the
 * workflow bundle imports this file.
 */
export const FailureType = {
  /** Bad input, bad config, an existing output...: the user's to fix. Never retried. */
  Config: 'ConfigError',
  /** The first replies of `/verify` were all 4xx rejections: the server or the config is wrong. */
  VerifyRejected: 'VerifyRejected',
  /** A file changed after the plan read it: a planned row is no longer where the plan put it. */
  InputChanged: 'InputChanged',
  /** A batch attempt left rows the server fails on while it answers others (retried). */
  RowsFailing: 'VerifyRowsFailing',
  /**
   * `/aggregate_metrics` cannot succeed: it answered what retrying cannot fix (a 4xx other than
   * 408/429, a 2xx that is not the expected JSON), or kept failing while the server is up. Not
   * retried; the run ends with its rows complete (exit 2).
   */
  AggregationFailed: 'AggregationFailed',
  /**
   * The worker shut down (Ctrl-C in `reverify run`, SIGTERM of a worker) while a batch ran: the
   * batch handed back its checkpoint and is retried at once by the next worker. Expected, so quiet.
   * Written by earlier versions only (a stopped batch is now held, not failed); read in their histories.
   */
  WorkerShutdown: 'WorkerShutdown',
  /**
   * The experiment tracker refused an upload step (a 4xx other than 429: bad token, bad name) or a
   * row cannot be exported: not retried; the run ends as it would have, with one warning line.
   */
  UploadRefused: 'UploadRefused',
  /**
   * A file-system error that retrying cannot fix (a name too long, a file in the way, a permission,
   * a read-only file system; activities/user-errors.ts): the user's to fix. Never retried.
   */
  FileSystem: 'FileSystemError',
  /**
   * A loan of `/verify` lanes (activities/lend-lanes.ts) found no row left to lend to in its worker
   * process: it fails so that Temporal retries it, soon, on whichever worker polls next, until it
   * reaches one whose batches still have rows. Expected, so quiet (a benign failure, never shown).
   */
  LoanMoves: 'LoanMoves',
} as const;

/** Failures that retrying cannot fix: the run stops with the activity's one-line message. */
export const TERMINAL_FAILURE_TYPES: string[] = [
  FailureType.Config,
  FailureType.VerifyRejected,
  FailureType.InputChanged,
  FailureType.FileSystem,
];

/** Terminal failures that are the user's to fix (exit status 1). */
export const USER_FAILURE_TYPES: ReadonlySet<string> = new Set([
  FailureType.Config,
  FailureType.VerifyRejected,
  FailureType.InputChanged,
  FailureType.FileSystem,
]);
