/**
 * Starting `temporal server start-dev` as a detached daemon on the state dir's SQLite file,
 * recorded in server.json.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, rmSync } from 'node:fs';
import { ConfigError } from '../../contract/errors.js';
import { findTemporalBinary } from '../binary.js';
import { DEFAULT_DEV_SERVER_PORT, DEFAULT_DEV_SERVER_UI_PORT, HOST } from './defaults.js';
import { waitForPort } from './health.js';
import { toInfo } from './info.js';
import { logTail, rotateLog } from './log-file.js';
import type { devServerPaths } from './paths.js';
import { choosePort, envPort } from './ports.js';
import { terminate } from './processes.js';
import { waitUntilReady } from './readiness.js';
import { writeRecord } from './record-file.js';
import { devServerEnv } from './server-env.js';
import type { DevServerInfo, DevServerRecord, EnsureDevServerOptions } from './types.js';
import { DEV_SERVER_SEARCH_ATTRIBUTE_ARGS } from '../search-attributes.js';

export async function startServer(
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
    const args = serverArgs(paths.dbPath, port, uiPort, namespace, opts.extraArgs ?? []);
    rotateLog(paths.logPath);
    const { pid, exit } = await spawnServer(binary, args, dir, paths.logPath);
    const record: DevServerRecord = {
      pid,
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

/** The `temporal server start-dev` arguments of a server on `port`/`uiPort` keeping its state in `dbPath`. */
function serverArgs(dbPath: string, port: number, uiPort: number, namespace: string, extraArgs: string[]): string[] {
  return [
    'server',
    'start-dev',
    '--db-filename',
    dbPath,
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
    ...DEV_SERVER_SEARCH_ATTRIBUTE_ARGS,
    // A run refused by a user error before it wrote anything is deleted (src/cli/user-error-runs.ts):
    // without these the server first waits for the run's close tasks, up to a minute when busy.
    '--dynamic-config-value',
    'history.transferProcessorEnsureCloseBeforeDelete=false',
    '--dynamic-config-value',
    'history.visibilityProcessorEnsureCloseBeforeDelete=false',
    ...extraArgs,
  ];
}

/** How the spawned server ended, filled in when it does (read by the readiness wait). */
type ServerExit = { done: boolean; code: number | null; signal: NodeJS.Signals | null; error?: Error };

/**
 * Spawns the server detached, its output appended to `logPath`, with a soft memory limit (server-env.ts);
 * a spawn error (ENOENT, EACCES) is one line.
 */
async function spawnServer(binary: string, args: string[], dir: string, logPath: string): Promise<{ pid: number; exit: ServerExit }> {
  const logFd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, args, { detached: true, stdio: ['ignore', logFd, logFd], cwd: dir, env: devServerEnv() });
  } finally {
    closeSync(logFd);
  }
  const exit: ServerExit = { done: false, code: null, signal: null };
  child.once('exit', (code, signal) => Object.assign(exit, { done: true, code, signal }));
  child.once('error', (error) => Object.assign(exit, { done: true, error }));
  child.unref();
  // Wait a tick so a spawn error is reported before anything is recorded.
  await new Promise((r) => setImmediate(r));
  if (exit.error !== undefined || child.pid === undefined) {
    throw new ConfigError(
      `could not start the Temporal dev server (${binary}): ${exit.error?.message ?? 'no pid'}; set TEMPORAL_CLI_PATH to a working temporal binary or TEMPORAL_ADDRESS to a running server`,
    );
  }
  return { pid: child.pid, exit };
}

function cliVersion(binary: string): string {
  try {
    const out = execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] });
    return /version\s+(\S+)/.exec(out)?.[1] ?? out.trim();
  } catch {
    return 'unknown';
  }
}
