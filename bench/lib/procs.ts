/**
 * Child processes of a benchmark, and their clean-up: every process a bench script starts is
 * registered here and killed when the script ends, fails, or is interrupted; the embedded Temporal
 * dev servers it started are stopped with `reverify server stop`.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (bench/lib/ is two levels below it). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The CLI entry point, run as `node bin/reverify.js …` or, where a bench measures it, by its shebang. */
export const CLI = join(ROOT, 'bin', 'reverify.js');

const children = new Set<ChildProcess>();
/** Set once clean-up began: nothing new may be started after it. */
let stopping = false;

function assertNotStopping(what: string): void {
  if (stopping) throw new Error(`not starting ${what}: the benchmark is stopping`);
}
/** State dirs whose dev server this script started (stopped at exit). */
const devServers = new Set<string>();

/** A child process's environment: never a remote cluster, always the given state dir. */
export function benchEnv(stateDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, REVERIFY_STATE_DIR: stateDir, ...extra };
  delete env.TEMPORAL_ADDRESS;
  delete env.TEMPORAL_NAMESPACE;
  return env;
}

export interface Spawned {
  child: ChildProcess;
  pid: number;
  /** Resolves with the exit code (or 128+signal) when the process ends. */
  exited: Promise<number>;
}

/**
 * Spawns `bin/reverify.js args…` as a user's `reverify` runs it: the file itself, through its
 * shebang (`env -S MALLOC_ARENA_MAX=2 node`); with `nodeArgs`, the shebang's environment and
 * `node [nodeArgs] bin/reverify.js args…` (node flags such as `--cpu-prof` cannot go in
 * NODE_OPTIONS). Registered for clean-up; its stdout and stderr go to `logPath`.
 */
export function spawnCli(
  args: string[],
  opts: {
    env: NodeJS.ProcessEnv;
    logPath: string;
    nodeArgs?: string[];
    onStdout?: (text: string) => void;
    onStderr?: (text: string) => void;
  },
): Spawned {
  assertNotStopping(`reverify ${args[0]}`);
  const nodeArgs = opts.nodeArgs ?? [];
  if (nodeArgs.length === 0) return spawnLogged(CLI, args, opts);
  return spawnLogged(process.execPath, [...nodeArgs, CLI, ...args], { ...opts, env: { ...opts.env, ...shebangEnv() } });
}

/** The variables bin/reverify.js's shebang sets (`#!/usr/bin/env -S NAME=VALUE … node`). */
export function shebangEnv(): Record<string, string> {
  const line = readFileSync(CLI, 'utf8').split('\n')[0];
  const words = /^#!\/usr\/bin\/env -S (.*) node$/.exec(line)?.[1].split(' ') ?? [];
  return Object.fromEntries(words.map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));
}

/**
 * Runs a shell command line (`sh -c 'exec …'`, so the pid is the command's own), logged like
 * `spawnCli` and stopped with the other children: another implementation to compare with.
 */
export function spawnShell(command: string, opts: { env: NodeJS.ProcessEnv; logPath: string }): Spawned {
  assertNotStopping(command);
  return spawnLogged('/bin/sh', ['-c', `exec ${command}`], opts);
}

function spawnLogged(
  file: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; logPath: string; onStdout?: (text: string) => void; onStderr?: (text: string) => void },
): Spawned {
  const log = createWriteStream(opts.logPath);
  const spawnOpts: SpawnOptions = { cwd: ROOT, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] };
  const child = spawn(file, args, spawnOpts);
  if (child.pid === undefined) throw new Error(`could not spawn ${file} ${args.join(' ')}`);
  children.add(child);
  child.stdout!.on('data', (chunk: Buffer) => {
    log.write(chunk);
    opts.onStdout?.(chunk.toString('utf8'));
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    log.write(chunk);
    opts.onStderr?.(chunk.toString('utf8'));
  });
  const exited = new Promise<number>((resolveExit) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      // Let the pipes drain into the log before it is closed.
      setImmediate(() => log.end());
      resolveExit(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15));
    });
  });
  return { child, pid: child.pid, exited };
}

/** Runs the CLI to completion (for short commands such as `server start`); throws on failure. */
export function runCliSync(args: string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) {
    throw new Error(`node bin/reverify.js ${args.join(' ')} failed (status ${r.status}): ${(r.stderr || r.stdout || '').trim()}`);
  }
  return r.stdout;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export async function stopProcess(p: Spawned, graceMs = 5_000): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  await p.exited;
  clearTimeout(timer);
}

/** A reference resources server in its own process. */
export interface ReferenceServerProc extends Spawned {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts `reverify reference-server --port 0 --latency-ms L` in a separate process (so that it
 * never shares an event loop with the clients) and resolves with its URL once it listens.
 */
export async function startReferenceServerProc(opts: {
  latencyMs: number;
  logPath: string;
  env?: NodeJS.ProcessEnv;
  extraArgs?: string[];
}): Promise<ReferenceServerProc> {
  let seen = '';
  let resolveUrl!: (url: string) => void;
  const urlPromise = new Promise<string>((r) => (resolveUrl = r));
  const p = spawnCli(['reference-server', '--port', '0', '--latency-ms', String(opts.latencyMs), ...(opts.extraArgs ?? [])], {
    env: opts.env ?? process.env,
    logPath: opts.logPath,
    onStdout: (text) => {
      seen += text;
      const m = /listening on (http:\/\/\S+)/.exec(seen);
      if (m) resolveUrl(m[1]);
    },
  });
  const url = await Promise.race([
    urlPromise,
    p.exited.then((code) => {
      throw new Error(`reference server exited with status ${code} before listening (see ${opts.logPath})`);
    }),
    sleep(60_000).then(() => {
      throw new Error(`reference server did not listen within 60 s (see ${opts.logPath})`);
    }),
  ]);
  return { ...p, url, stop: () => stopProcess(p) };
}

/** What `<state>/server.json` records about the embedded Temporal dev server. */
export interface DevServerRecord {
  pid: number;
  port: number;
  uiPort: number;
}

export function readDevServerRecord(stateDir: string): DevServerRecord {
  return JSON.parse(readFileSync(join(stateDir, 'server.json'), 'utf8')) as DevServerRecord;
}

/**
 * `reverify server start` on a dedicated state dir (registered: `server stop` runs at exit).
 * Returns the server's record (pid, gRPC port).
 */
export function startDevServer(stateDir: string): DevServerRecord & { address: string } {
  assertNotStopping('the Temporal dev server');
  devServers.add(stateDir);
  runCliSync(['server', 'start'], benchEnv(stateDir));
  const record = readDevServerRecord(stateDir);
  return { ...record, address: `127.0.0.1:${record.port}` };
}

/** `reverify server stop` on a state dir. */
export function stopDevServer(stateDir: string): void {
  if (!devServers.delete(stateDir)) return;
  try {
    runCliSync(['server', 'stop'], benchEnv(stateDir));
  } catch (err) {
    process.stderr.write(`warning: ${(err as Error).message}\n`);
  }
}

/**
 * Makes `stateDir` fresh: stops a dev server a previous (crashed) bench left running on it, then
 * deletes the directory.
 */
export function freshStateDir(stateDir: string): void {
  if (existsSync(join(stateDir, 'server.json'))) {
    try {
      runCliSync(['server', 'stop'], benchEnv(stateDir));
    } catch (err) {
      process.stderr.write(`warning: ${(err as Error).message}\n`);
    }
  }
  rmSync(stateDir, { recursive: true, force: true });
}

/** Kills every registered child and stops every dev server started by this script. */
export async function cleanUp(): Promise<void> {
  stopping = true;
  await Promise.allSettled(
    [...children].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await once(child, 'exit').catch(() => undefined);
      clearTimeout(timer);
    }),
  );
  for (const dir of [...devServers]) stopDevServer(dir);
}

/** Last resort at process exit (synchronous): SIGKILL the children, SIGTERM the dev servers. */
function cleanUpSync(): void {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of devServers) {
    try {
      process.kill(readDevServerRecord(dir).pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

/**
 * Runs a bench script's `main`, cleaning up on success, on error and on SIGINT/SIGTERM; exits
 * with 0, 1 (error) or 130 (interrupted).
 */
export function runBench(main: () => Promise<void>): void {
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${signal}: stopping the processes this benchmark started…\n`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', cleanUpSync);
  void main()
    .then(
      () => 0,
      (err: unknown) => {
        process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        return 1;
      },
    )
    .then(async (code) => {
      await cleanUp();
      if (!interrupted) process.exit(code);
    });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
