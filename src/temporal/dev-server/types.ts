/**
 * The shapes of the dev server's API: what ensureDevServer takes and returns, the contents of
 * server.json, and what devServerStatus reports.
 */

export interface DevServerInfo {
  /** gRPC frontend, `127.0.0.1:<port>`. */
  address: string;
  /** Web UI base URL, `http://127.0.0.1:<uiPort>`. */
  uiUrl: string;
  pid: number;
  /** False when an existing healthy server was reused. */
  started: boolean;
  port: number;
  uiPort: number;
  namespace: string;
  stateDir: string;
  dbPath: string;
  logPath: string;
}

export interface EnsureDevServerOptions {
  /** Default: `stateDir()` (REVERIFY_STATE_DIR, XDG_STATE_HOME/reverify, ~/.local/state/reverify). */
  stateDir?: string;
  /**
   * gRPC port. Default: `$REVERIFY_TEMPORAL_PORT`; else the port the last server in this state dir
   * used, else 7233, whichever is free, else a port chosen by the OS. An explicit port (option or
   * env) must be free; 0 means "any free port".
   */
  port?: number;
  /** Web UI port; same rules with `$REVERIFY_TEMPORAL_UI_PORT` and 8233. */
  uiPort?: number;
  /** Namespace to create (the `default` namespace always exists). Default `default`. */
  namespace?: string;
  /** Readiness deadline for a starting server. Default 30 s. */
  readyTimeoutMs?: number;
  /** The temporal CLI to run. Default `findTemporalBinary()`. */
  binary?: string;
  /** Days the namespace keeps finished runs. Default `$REVERIFY_RETENTION_DAYS`, else 30 (retention.ts). */
  retentionDays?: number;
  /** Extra `start-dev` flags, e.g. `['--search-attribute', 'ReverifyJob=Keyword']`. */
  extraArgs?: string[];
}

/** Contents of `<state>/server.json`. */
export interface DevServerRecord {
  pid: number;
  port: number;
  uiPort: number;
  dbPath: string;
  /** Version of the temporal CLI that runs it, e.g. `1.9.1`. */
  version: string;
  binary: string;
  startedAt: string;
}

export interface DevServerStatus {
  stateDir: string;
  dbPath: string;
  logPath: string;
  /** A server.json names a live dev-server process on this state dir. */
  running: boolean;
  /** …and its gRPC frontend answers. */
  healthy: boolean;
  pid?: number;
  address?: string;
  uiUrl?: string;
  version?: string;
  startedAt?: string;
}
