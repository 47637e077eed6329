import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common';
import { ConfigError } from '../contract/errors.js';
import { findTemporalBinary } from './binary.js';
import { stateDir as defaultStateDir } from './state-dir.js';

/**
 * The embedded Temporal dev server (`temporal server start-dev` on a SQLite file).
 *
 * It runs as a DETACHED daemon, shared by every `reverify` process that uses the same state
 * directory: the Web UI link printed at the end of a run keeps working after the CLI exits, a
 * second CLI in another terminal attaches to the same server, and a crashed CLI, restarted, finds
 * its workflow still there. `<state>/server.json` records the daemon; `<state>/server.lock`
 * (O_EXCL, stale when its pid is dead) keeps two CLIs starting at once from starting two servers
 * on one SQLite file.
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

export const DEFAULT_DEV_SERVER_PORT = 7233;
export const DEFAULT_DEV_SERVER_UI_PORT = 8233;
export const DEFAULT_READY_TIMEOUT_MS = 30_000;

const SERVER_FILE = 'server.json';
const LOCK_FILE = 'server.lock';
const LOG_FILE = 'temporal-server.log';
const DB_FILE = 'temporal.sqlite';
const HOST = '127.0.0.1';
const POLL_MS = 150;
/** A lock older than this is considered abandoned even if its pid looks alive (pid reuse). */
const LOCK_STALE_MS = 5 * 60_000;
const STOP_TIMEOUT_MS = 20_000;

/** Page of a workflow in the Web UI (the UI redirects to its latest run). */
export function workflowUiUrl(uiUrl: string, namespace: string, workflowId: string): string {
  return `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** Paths of the files kept in a state dir. */
export function devServerPaths(dir: string): { serverFile: string; lockFile: string; logPath: string; dbPath: string } {
  return {
    serverFile: join(dir, SERVER_FILE),
    lockFile: join(dir, LOCK_FILE),
    logPath: join(dir, LOG_FILE),
    dbPath: join(dir, DB_FILE),
  };
}

/**
 * Reuse the dev server recorded in the state dir if it is alive and answers, else start one
 * (detached) and wait until it answers. Safe to call from several processes at once.
 */
export async function ensureDevServer(opts: EnsureDevServerOptions = {}): Promise<DevServerInfo> {
  const dir = resolveStateDir(opts.stateDir);
  const namespace = opts.namespace ?? 'default';
  const readyTimeoutMs = opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const paths = devServerPaths(dir);

  // Fast path, no lock: a recorded server that is alive and answers.
  const known = readRecord(paths.serverFile);
  if (known !== undefined && known.dbPath === paths.dbPath && isOurServer(known)) {
    const health = await probe(known.port, namespace, 3_000);
    if (health !== 'down') {
      if (health === 'no-namespace') await ensureNamespace(known.port, namespace, Date.now() + readyTimeoutMs);
      return toInfo(dir, known, namespace, false);
    }
  }

  const release = await acquireLock(paths.lockFile, Date.now() + readyTimeoutMs + 30_000);
  try {
    // Re-check under the lock: another process may have started it meanwhile, or a server may be
    // running on our SQLite file without a server.json (a CLI killed right after spawning it).
    let record = readRecord(paths.serverFile);
    if (record !== undefined && record.dbPath !== paths.dbPath) record = undefined; // copied state dir
    if (record === undefined || !isOurServer(record)) {
      const orphan = findOrphanServer(paths.dbPath);
      if (orphan !== undefined) {
        record = orphan;
        writeRecord(paths.serverFile, record);
      }
    }
    if (record !== undefined && isOurServer(record)) {
      await waitUntilReady({ record, namespace, deadline: Date.now() + readyTimeoutMs, logPath: paths.logPath });
      await ensureNamespace(record.port, namespace, Date.now() + readyTimeoutMs);
      return toInfo(dir, record, namespace, false);
    }
    if (existsSync(paths.serverFile)) rmSync(paths.serverFile, { force: true });
    return await startServer(dir, paths, namespace, readyTimeoutMs, opts, record);
  } finally {
    release();
  }
}

/**
 * Stop the dev server of a state dir: SIGTERM, wait for the process to exit (SIGKILL after 20 s),
 * remove server.json. Returns whether a running server was stopped.
 */
export async function stopDevServer(dir?: string): Promise<{ stopped: boolean; pid?: number }> {
  const stateDirPath = resolveStateDir(dir);
  const paths = devServerPaths(stateDirPath);
  const release = await acquireLock(paths.lockFile, Date.now() + 60_000);
  try {
    let record = readRecord(paths.serverFile);
    if (record === undefined || !isOurServer(record)) record = findOrphanServer(paths.dbPath) ?? record;
    if (record === undefined) return { stopped: false };
    let stopped = false;
    if (isOurServer(record)) {
      await terminate(record.pid);
      stopped = true;
    }
    rmSync(paths.serverFile, { force: true });
    return { stopped, pid: record.pid };
  } finally {
    release();
  }
}

/** What is known about the dev server of a state dir, without starting anything. */
export async function devServerStatus(dir?: string): Promise<DevServerStatus> {
  const stateDirPath = resolveStateDir(dir);
  const paths = devServerPaths(stateDirPath);
  const base = { stateDir: stateDirPath, dbPath: paths.dbPath, logPath: paths.logPath };
  let record = readRecord(paths.serverFile);
  if (record === undefined || !isOurServer(record)) record = findOrphanServer(paths.dbPath) ?? record;
  if (record === undefined) return { ...base, running: false, healthy: false };
  const running = isOurServer(record);
  const healthy = running && (await probe(record.port, 'default', 3_000)) !== 'down';
  return {
    ...base,
    running,
    healthy,
    pid: record.pid,
    address: `${HOST}:${record.port}`,
    uiUrl: `http://${HOST}:${record.uiPort}`,
    version: record.version,
    startedAt: record.startedAt,
  };
}

// ---------------------------------------------------------------------------------------------
// Starting

async function startServer(
  dir: string,
  paths: ReturnType<typeof devServerPaths>,
  namespace: string,
  readyTimeoutMs: number,
  opts: EnsureDevServerOptions,
  previous: DevServerRecord | undefined,
): Promise<DevServerInfo> {
  const binary = opts.binary ?? findTemporalBinary();
  const version = cliVersion(binary);
  const requestedPort = opts.port ?? envPort('REVERIFY_TEMPORAL_PORT');
  const requestedUiPort = opts.uiPort ?? envPort('REVERIFY_TEMPORAL_UI_PORT');
  // A port picked as "free" can be taken before the server binds it; retry with fresh ports then.
  for (let attempt = 1; ; attempt++) {
    const port = await choosePort(requestedPort, [previous?.port, DEFAULT_DEV_SERVER_PORT], 'REVERIFY_TEMPORAL_PORT', []);
    const uiPort = await choosePort(requestedUiPort, [previous?.uiPort, DEFAULT_DEV_SERVER_UI_PORT], 'REVERIFY_TEMPORAL_UI_PORT', [port]);
    const args = [
      'server',
      'start-dev',
      '--db-filename',
      paths.dbPath,
      '--sqlite-pragma',
      'journal_mode=WAL',
      '--sqlite-pragma',
      'synchronous=NORMAL',
      '--ip',
      HOST,
      '--port',
      String(port),
      '--ui-port',
      String(uiPort),
      '--log-level',
      'warn',
      ...(namespace !== 'default' ? ['--namespace', namespace] : []),
      ...(opts.extraArgs ?? []),
    ];
    rotateLog(paths.logPath);
    const logFd = openSync(paths.logPath, 'a');
    let child: ChildProcess;
    try {
      child = spawn(binary, args, { detached: true, stdio: ['ignore', logFd, logFd], cwd: dir });
    } finally {
      closeSync(logFd);
    }
    const exit: { done: boolean; code: number | null; signal: NodeJS.Signals | null; error?: Error } = {
      done: false,
      code: null,
      signal: null,
    };
    child.once('exit', (code, signal) => Object.assign(exit, { done: true, code, signal }));
    child.once('error', (error) => Object.assign(exit, { done: true, error }));
    child.unref();
    // Wait a tick so a spawn error (ENOENT, EACCES) is reported before we record anything.
    await new Promise((r) => setImmediate(r));
    if (exit.error !== undefined || child.pid === undefined) {
      throw new ConfigError(
        `could not start the Temporal dev server (${binary}): ${exit.error?.message ?? 'no pid'}; set TEMPORAL_CLI_PATH to a working temporal binary or TEMPORAL_ADDRESS to a running server`,
      );
    }
    const record: DevServerRecord = {
      pid: child.pid,
      port,
      uiPort,
      dbPath: paths.dbPath,
      version,
      binary,
      startedAt: new Date().toISOString(),
    };
    // Recorded before readiness, so a CLI killed now leaves a findable server, not an orphan.
    writeRecord(paths.serverFile, record);
    try {
      await waitUntilReady({ record, namespace, deadline: Date.now() + readyTimeoutMs, logPath: paths.logPath, exit });
    } catch (err) {
      await terminate(record.pid).catch(() => undefined);
      rmSync(paths.serverFile, { force: true });
      const portClash = /address already in use/i.test(logTail(paths.logPath, 40).join('\n'));
      const chosenByUs = requestedPort === undefined || requestedPort === 0;
      const uiChosenByUs = requestedUiPort === undefined || requestedUiPort === 0;
      if (portClash && chosenByUs && uiChosenByUs && attempt < 3) {
        previous = undefined;
        continue;
      }
      throw err;
    }
    await waitForPort(uiPort, Math.min(Date.now() + 5_000, Date.now() + readyTimeoutMs));
    return toInfo(dir, record, namespace, true);
  }
}

async function choosePort(
  requested: number | undefined,
  preferred: Array<number | undefined>,
  envName: string,
  taken: number[],
): Promise<number> {
  if (requested !== undefined && requested !== 0) {
    if (taken.includes(requested) || !(await isPortFree(requested))) {
      throw new ConfigError(
        `port ${requested} requested for the Temporal dev server is in use: choose another (option or ${envName}), or leave it unset to pick a free one`,
      );
    }
    return requested;
  }
  if (requested === undefined) {
    for (const p of preferred) {
      if (p !== undefined && !taken.includes(p) && (await isPortFree(p))) return p;
    }
  }
  for (;;) {
    const p = await freePort();
    if (!taken.includes(p)) return p;
  }
}

function envPort(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new ConfigError(`${name}=${raw} is not a port number: use an integer from 1 to 65535 (0: any free port), or unset it`);
  }
  return n;
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolvePromise(false));
    srv.listen({ port, host: HOST, exclusive: true }, () => srv.close(() => resolvePromise(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port: 0, host: HOST, exclusive: true }, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolvePromise(port));
    });
  });
}

function cliVersion(binary: string): string {
  try {
    const out = execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] });
    return /version\s+(\S+)/.exec(out)?.[1] ?? out.trim();
  } catch {
    return 'unknown';
  }
}

function rotateLog(logPath: string): void {
  try {
    if (statSync(logPath).size > 0) renameSync(logPath, `${logPath}.1`);
  } catch {
    // no previous log
  }
}

// ---------------------------------------------------------------------------------------------
// Readiness and health

type Health = 'ok' | 'no-namespace' | 'down';

/** Poll every 150 ms until the frontend answers DescribeNamespace, the process exits, or the deadline. */
async function waitUntilReady(args: {
  record: DevServerRecord;
  namespace: string;
  deadline: number;
  logPath: string;
  exit?: { done: boolean; code: number | null; signal: NodeJS.Signals | null };
}): Promise<void> {
  const { record, namespace, deadline, logPath, exit } = args;
  const started = Date.now();
  for (;;) {
    const exited = exit?.done === true || !pidAlive(record.pid);
    if (exited) {
      // Our own child: give its 'exit' event a moment, for the exit code.
      for (let i = 0; i < 10 && exit !== undefined && !exit.done; i++) await sleep(50);
      const how =
        exit?.done === true ? (exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`) : 'exited';
      throw startFailure(`the Temporal dev server (pid ${record.pid}) ${how} before it was ready`, logPath);
    }
    const remaining = deadline - Date.now();
    const health = await probe(record.port, namespace, Math.max(500, Math.min(3_000, remaining)));
    if (health !== 'down') return;
    if (Date.now() >= deadline) {
      throw startFailure(
        `the Temporal dev server (pid ${record.pid}, ${HOST}:${record.port}) did not answer within ${Math.round((Date.now() - started) / 1000)} s; stop it with \`reverify server stop\` (or kill ${record.pid}) and try again`,
        logPath,
      );
    }
    await sleep(POLL_MS);
  }
}

function startFailure(summary: string, logPath: string): ConfigError {
  const tail = logTail(logPath, 12);
  const shown =
    tail.length > 0
      ? `; last lines of ${logPath}:\n${tail.map((l) => `  ${truncate(l, 400)}`).join('\n')}`
      : `; its log ${logPath} is empty`;
  return new ConfigError(`${summary}${shown}`);
}

/**
 * Is a Temporal frontend answering on 127.0.0.1:port? 'no-namespace' when it answers but the
 * namespace does not exist. A plain TCP check first keeps the poll cheap while nothing listens.
 */
async function probe(port: number, namespace: string, timeoutMs: number): Promise<Health> {
  if (!(await tcpOpen(port, Math.min(timeoutMs, 1_000)))) return 'down';
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address: `${HOST}:${port}`, connectTimeout: timeoutMs });
    const conn = connection;
    await conn.withDeadline(Date.now() + timeoutMs, () => conn.workflowService.describeNamespace({ namespace }));
    return 'ok';
  } catch (err) {
    return grpcCode(err) === 5 /* NOT_FOUND */ ? 'no-namespace' : 'down';
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

async function ensureNamespace(port: number, namespace: string, deadline: number): Promise<void> {
  if (namespace === 'default') return;
  let registered = false;
  for (;;) {
    const health = await probe(port, namespace, 3_000);
    if (health === 'ok') return;
    if (health === 'no-namespace' && !registered) {
      const connection = await Connection.connect({ address: `${HOST}:${port}`, connectTimeout: 5_000 });
      try {
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: msToTs('1 day'), // as start-dev's own namespaces
        });
      } catch (err) {
        if (grpcCode(err) !== 6 /* ALREADY_EXISTS */) throw err;
      } finally {
        await connection.close();
      }
      registered = true;
    }
    if (Date.now() >= deadline) {
      throw new ConfigError(
        `namespace '${namespace}' is not available on the Temporal dev server at ${HOST}:${port}: check the server log, or use the default namespace`,
      );
    }
    await sleep(POLL_MS);
  }
}

function grpcCode(err: unknown): number | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e !== null && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function tcpOpen(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = createConnection({ port, host: HOST });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolvePromise(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function waitForPort(port: number, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (await tcpOpen(port, 500)) return;
    await sleep(POLL_MS);
  }
}

// ---------------------------------------------------------------------------------------------
// Processes

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A zombie answers kill(0) but is gone.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
  } catch {
    // no procfs (macOS): trust kill(0)
  }
  return true;
}

/** argv of a process (Linux); undefined when unknown. */
function processArgs(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
  } catch {
    return undefined;
  }
}

/** The recorded pid is alive and (where /proc tells) is `start-dev` on this record's SQLite file. */
function isOurServer(record: DevServerRecord): boolean {
  if (!pidAlive(record.pid)) return false;
  const args = processArgs(record.pid);
  if (args === undefined) return existsSync('/proc') ? false : true;
  return args.includes('start-dev') && args.includes(record.dbPath);
}

/** A live `start-dev` on this SQLite file that no server.json names (Linux only). */
function findOrphanServer(dbPath: string): DevServerRecord | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const args = processArgs(pid);
    if (args === undefined || !args.includes('start-dev') || !args.includes(dbPath)) continue;
    if (!pidAlive(pid)) continue;
    const flag = (name: string): number | undefined => {
      const i = args.indexOf(name);
      const v = i >= 0 ? Number(args[i + 1]) : NaN;
      return Number.isInteger(v) ? v : undefined;
    };
    const port = flag('--port') ?? DEFAULT_DEV_SERVER_PORT;
    return {
      pid,
      port,
      uiPort: flag('--ui-port') ?? port + 1000,
      dbPath,
      version: 'unknown',
      binary: args[0] ?? 'temporal',
      startedAt: new Date().toISOString(),
    };
  }
  return undefined;
}

async function terminate(pid: number): Promise<void> {
  if (!pidAlive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!pidAlive(pid)) return;
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  const killDeadline = Date.now() + 5_000;
  while (Date.now() < killDeadline && pidAlive(pid)) await sleep(100);
}

// ---------------------------------------------------------------------------------------------
// Files

function resolveStateDir(dir: string | undefined): string {
  if (dir === undefined) return defaultStateDir();
  const abs = resolve(dir);
  mkdirSync(abs, { recursive: true });
  return abs;
}

function readRecord(file: string): DevServerRecord | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const r = JSON.parse(raw) as Partial<DevServerRecord>;
    if (typeof r.pid === 'number' && typeof r.port === 'number' && typeof r.uiPort === 'number' && typeof r.dbPath === 'string') {
      return {
        pid: r.pid,
        port: r.port,
        uiPort: r.uiPort,
        dbPath: r.dbPath,
        version: typeof r.version === 'string' ? r.version : 'unknown',
        binary: typeof r.binary === 'string' ? r.binary : 'temporal',
        startedAt: typeof r.startedAt === 'string' ? r.startedAt : '',
      };
    }
  } catch {
    // corrupt: treated as absent
  }
  return undefined;
}

function writeRecord(file: string, record: DevServerRecord): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(tmp, file);
}

/**
 * Take `<state>/server.lock` (created with O_EXCL). A lock whose pid is dead, or that is older than
 * 5 minutes, is stale and removed. Returns the release function.
 */
async function acquireLock(lockFile: string, deadline: number): Promise<() => void> {
  for (;;) {
    try {
      const fd = openSync(lockFile, 'wx');
      try {
        writeFileSync(fd, JSON.stringify({ pid: process.pid, at: new Date().toISOString() }));
      } finally {
        closeSync(fd);
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          const holder = JSON.parse(readFileSync(lockFile, 'utf8')) as { pid?: number };
          if (holder.pid === process.pid) rmSync(lockFile, { force: true });
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readLockHolder(lockFile);
    if (holder === undefined) continue; // vanished between open and read
    const age = Date.now() - holder.mtimeMs;
    // No pid yet: the holder is between creating and writing the file; stale only if that lasts.
    const stale = age > LOCK_STALE_MS || (holder.pid === undefined ? age > 10_000 : !pidAlive(holder.pid));
    if (stale) {
      rmSync(lockFile, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new ConfigError(
        `another reverify process (pid ${holder.pid ?? 'unknown'}) is starting or stopping the Temporal dev server (lock ${lockFile}); wait for it, or delete the lock file if that process is gone`,
      );
    }
    await sleep(100);
  }
}

function readLockHolder(lockFile: string): { pid: number | undefined; mtimeMs: number } | undefined {
  let fd: number;
  try {
    fd = openSync(lockFile, 'r');
  } catch {
    return undefined;
  }
  try {
    const { mtimeMs, size } = fstatSync(fd);
    const buf = Buffer.alloc(Math.min(size, 4096));
    const n = readSync(fd, buf, 0, buf.length, 0);
    let pid: number | undefined;
    try {
      const parsed = JSON.parse(buf.subarray(0, n).toString('utf8')) as { pid?: unknown };
      pid = typeof parsed.pid === 'number' ? parsed.pid : undefined;
    } catch {
      pid = undefined; // being written right now, or garbage
    }
    return { pid, mtimeMs };
  } finally {
    closeSync(fd);
  }
}

/** Last `lines` non-empty lines of a file (reads at most the last 64 KiB). */
export function logTail(path: string, lines: number): string[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const { size } = fstatSync(fd);
    const len = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf
      .toString('utf8')
      .split('\n')
      .map((l) => l.trimEnd())
      .filter((l) => l !== '')
      .slice(-lines);
  } finally {
    closeSync(fd);
  }
}

function toInfo(dir: string, record: DevServerRecord, namespace: string, started: boolean): DevServerInfo {
  const paths = devServerPaths(dir);
  return {
    address: `${HOST}:${record.port}`,
    uiUrl: `http://${HOST}:${record.uiPort}`,
    pid: record.pid,
    started,
    port: record.port,
    uiPort: record.uiPort,
    namespace,
    stateDir: dir,
    dbPath: record.dbPath,
    logPath: paths.logPath,
  };
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
