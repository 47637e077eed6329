import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { afterAll, afterEach, describe, expect, inject, it, vi } from 'vitest';
import { ConfigError } from '../../src/contract/errors.js';
import { BUNDLED_TEMPORAL_BINARY, findTemporalBinary, PROJECT_ROOT } from '../../src/temporal/binary.js';
import {
  devServerPaths,
  devServerStatus,
  ensureDevServer,
  stopDevServer,
  workflowUiUrl,
  type DevServerRecord,
} from '../../src/temporal/dev-server/index.js';
import { isPortFree } from '../../src/temporal/dev-server/ports.js';
import { DEV_SERVER_GOMEMLIMIT } from '../../src/temporal/dev-server/server-env.js';
import { OUTPUT_ATTRIBUTE, outputSearchAttributes } from '../../src/temporal/search-attributes.js';
import { stateDir } from '../../src/temporal/state-dir.js';

// Real `temporal server start-dev` processes, each on its own temporary state dir.

const dirs: string[] = [];
function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'reverify-devserver-test-'));
  dirs.push(d);
  return d;
}

/**
 * A free port below the OS's ephemeral range (32768-60999 here), so no connection another test opens
 * meanwhile can take it: a port the OS picked can be reused as a client's local port once freed.
 */
async function freePortBelowEphemeral(taken: number[] = []): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!taken.includes(port) && (await isPortFree(port))) return port;
  }
}

afterAll(async () => {
  for (const d of dirs) {
    await stopDevServer(d).catch(() => undefined);
    rmSync(d, { recursive: true, force: true });
  }
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  const pid = child.pid!;
  await new Promise((r) => child.once('exit', r));
  return pid;
}

describe('the shared dev server from globalSetup', () => {
  it('answers at the injected address', async () => {
    const address = inject('temporalAddress');
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    const connection = await Connection.connect({ address });
    try {
      const info = await connection.workflowService.getSystemInfo({});
      expect(info.capabilities).toBeTruthy();
    } finally {
      await connection.close();
    }
    expect(inject('temporalNamespace')).toBe('default');
  });
});

describe('ensureDevServer', () => {
  it('starts a detached server, then reuses it (same pid, started=false); UI answers; status; stop', async () => {
    const dir = freshDir();
    const t0 = Date.now();
    const first = await ensureDevServer({ stateDir: dir, port: 0, uiPort: 0 });
    const coldMs = Date.now() - t0;
    console.log(`dev server cold start (fresh SQLite): ${coldMs} ms`);
    expect(first.started).toBe(true);
    expect(first.address).toBe(`127.0.0.1:${first.port}`);
    expect(first.uiUrl).toBe(`http://127.0.0.1:${first.uiPort}`);
    expect(alive(first.pid)).toBe(true);
    // Spawned with a soft memory limit for its Go runtime (server-env.ts), where /proc tells.
    if (existsSync(`/proc/${first.pid}/environ`)) {
      const environ = readFileSync(`/proc/${first.pid}/environ`, 'utf8').split('\0');
      expect(environ).toContain(`GOMEMLIMIT=${process.env.GOMEMLIMIT || DEV_SERVER_GOMEMLIMIT}`);
    }

    const paths = devServerPaths(dir);
    const record = JSON.parse(readFileSync(paths.serverFile, 'utf8')) as DevServerRecord;
    expect(record).toMatchObject({ pid: first.pid, port: first.port, uiPort: first.uiPort, dbPath: paths.dbPath, version: '1.9.1' });
    expect(existsSync(paths.dbPath)).toBe(true);
    expect(existsSync(paths.lockFile)).toBe(false);

    const t1 = Date.now();
    const second = await ensureDevServer({ stateDir: dir });
    console.log(`dev server reuse: ${Date.now() - t1} ms`);
    expect(second.started).toBe(false);
    expect(second.pid).toBe(first.pid);
    expect(second.address).toBe(first.address);

    const ui = await fetch(first.uiUrl);
    expect(ui.status).toBe(200);
    await ui.body?.cancel();

    const status = await devServerStatus(dir);
    expect(status).toMatchObject({ running: true, healthy: true, pid: first.pid, address: first.address, version: '1.9.1' });

    const t2 = Date.now();
    expect(await stopDevServer(dir)).toEqual({ stopped: true, pid: first.pid });
    console.log(`dev server stop: ${Date.now() - t2} ms`);
    expect(alive(first.pid)).toBe(false);
    expect(existsSync(paths.serverFile)).toBe(false);
    expect(await devServerStatus(dir)).toMatchObject({ running: false, healthy: false });
    expect(await stopDevServer(dir)).toEqual({ stopped: false });
  });

  it('the SQLite file keeps a running workflow across a stop and a restart', async () => {
    const dir = freshDir();
    const a = await ensureDevServer({ stateDir: dir, port: 0, uiPort: 0 });
    const workflowId = `persist-${Date.now()}`;
    {
      const connection = await Connection.connect({ address: a.address });
      try {
        const client = new Client({ connection });
        // No worker polls this queue: the workflow just stays Running, stored in SQLite. It is
        // found by its output: the server registered the search attribute at start.
        const typedSearchAttributes = await outputSearchAttributes(client, '/data/run 1/out.jsonl');
        expect(typedSearchAttributes).toBeDefined();
        await client.workflow.start('neverRegisteredWorkflow', {
          taskQueue: 'nobody-polls-this',
          workflowId,
          args: [],
          typedSearchAttributes,
        });
      } finally {
        await connection.close();
      }
    }
    const stillRunning = async (address: string): Promise<void> => {
      const connection = await Connection.connect({ address });
      try {
        const d = await new Client({ connection }).workflow.getHandle(workflowId).describe();
        expect(d.status.name).toBe('RUNNING');
        expect(d.type).toBe('neverRegisteredWorkflow');
        expect(d.typedSearchAttributes.get(OUTPUT_ATTRIBUTE)).toBe('/data/run 1/out.jsonl');
        // Registering it again at a restart on the same SQLite file is harmless.
        const query = `ReverifyOutput="/data/run 1/out.jsonl" AND ExecutionStatus="Running"`;
        let found: string[] = [];
        for (let i = 0; i < 50 && found.length === 0; i++) {
          found = [];
          for await (const w of new Client({ connection }).workflow.list({ query })) found.push(w.workflowId);
          if (found.length === 0) await new Promise((r) => setTimeout(r, 200));
        }
        expect(found).toEqual([workflowId]);
      } finally {
        await connection.close();
      }
    };

    // 1. A clean stop and start.
    await stopDevServer(dir);
    expect(alive(a.pid)).toBe(false);
    // Ports outside the ephemeral range: after the crash below, the next start must find them free
    // (a loaded CI run once saw an OS-picked port taken meanwhile, and the start fell back to 7233).
    const port = await freePortBelowEphemeral();
    const b = await ensureDevServer({ stateDir: dir, port, uiPort: await freePortBelowEphemeral([port]) });
    expect(b.started).toBe(true);
    expect(b.pid).not.toBe(a.pid);
    await stillRunning(b.address);

    // 2. A crash (SIGKILL): server.json is left behind naming a dead pid. The next start replaces
    //    it and prefers the ports of the dead server, so printed UI links stay valid.
    process.kill(b.pid, 'SIGKILL');
    for (let i = 0; i < 100 && alive(b.pid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(b.pid)).toBe(false);
    expect(existsSync(devServerPaths(dir).serverFile)).toBe(true);
    vi.stubEnv('REVERIFY_TEMPORAL_PORT', '');
    vi.stubEnv('REVERIFY_TEMPORAL_UI_PORT', '');
    const c = await ensureDevServer({ stateDir: dir });
    expect(c.started).toBe(true);
    expect(c.port).toBe(b.port);
    expect(c.uiPort).toBe(b.uiPort);
    await stillRunning(c.address);
    await stopDevServer(dir);
  });

  it('a busy default port (7233/8233) leads to other ports; a busy explicit port is a ConfigError', async () => {
    vi.stubEnv('REVERIFY_TEMPORAL_PORT', '');
    vi.stubEnv('REVERIFY_TEMPORAL_UI_PORT', '');
    // Hold 7233 and 8233 if they are free (if something else holds them, that is just as busy).
    const blockers: Server[] = [];
    for (const port of [7233, 8233]) {
      const srv = createServer();
      const ok = await new Promise<boolean>((resolve) => {
        srv.once('error', () => resolve(false));
        srv.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (ok) blockers.push(srv);
    }
    try {
      const dir = freshDir();
      const info = await ensureDevServer({ stateDir: dir });
      expect(info.started).toBe(true);
      expect(info.port).not.toBe(7233);
      expect(info.uiPort).not.toBe(8233);
      await stopDevServer(dir);

      const err = await ensureDevServer({ stateDir: freshDir(), port: 7233 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/^port 7233 requested for the Temporal dev server is in use: /);

      vi.stubEnv('REVERIFY_TEMPORAL_UI_PORT', '8233');
      const envErr = await ensureDevServer({ stateDir: freshDir() }).catch((e: unknown) => e);
      expect(envErr).toBeInstanceOf(ConfigError);
      expect((envErr as Error).message).toContain('REVERIFY_TEMPORAL_UI_PORT');
    } finally {
      await Promise.all(blockers.map((b) => new Promise((r) => b.close(r))));
    }
  });

  it('two processes starting at once share one server (lock file)', async () => {
    const dir = freshDir();
    const script = `
      import { ensureDevServer } from ${JSON.stringify(join(PROJECT_ROOT, 'src/temporal/dev-server/index.ts'))};
      const info = await ensureDevServer({ stateDir: ${JSON.stringify(dir)}, port: 0, uiPort: 0 });
      console.log(JSON.stringify({ pid: info.pid, started: info.started, address: info.address }));
    `;
    const scriptPath = join(dir, 'ensure.mts');
    writeFileSync(scriptPath, script);
    const tsx = join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx');
    const run = () =>
      promisify(execFile)(tsx, [scriptPath], { cwd: PROJECT_ROOT, timeout: 90_000 }).then(
        (r) => JSON.parse(r.stdout.trim().split('\n').pop()!) as { pid: number; started: boolean; address: string },
      );
    const results = await Promise.all([run(), run(), run()]);
    expect(results.filter((r) => r.started)).toHaveLength(1);
    expect(new Set(results.map((r) => r.pid)).size).toBe(1);
    expect(new Set(results.map((r) => r.address)).size).toBe(1);
    expect(alive(results[0].pid)).toBe(true);
    await stopDevServer(dir);
  });

  it('in one process, concurrent calls also share one server; a stale lock and a dead server.json are ignored', async () => {
    const dir = freshDir();
    const paths = devServerPaths(dir);
    const dead = await deadPid();
    writeFileSync(paths.lockFile, JSON.stringify({ pid: dead, at: new Date().toISOString() }));
    writeFileSync(
      paths.serverFile,
      JSON.stringify({ pid: dead, port: 1, uiPort: 2, dbPath: paths.dbPath, version: 'x', binary: 'x', startedAt: '' }),
    );
    const [a, b] = await Promise.all([
      ensureDevServer({ stateDir: dir, port: 0, uiPort: 0 }),
      ensureDevServer({ stateDir: dir, port: 0, uiPort: 0 }),
    ]);
    expect([a.started, b.started].sort()).toEqual([false, true]);
    expect(a.pid).toBe(b.pid);
    expect(a.port).not.toBe(1);
    await stopDevServer(dir);
  });

  it('finds a server running on its SQLite file even when server.json was lost', async () => {
    const dir = freshDir();
    const a = await ensureDevServer({ stateDir: dir, port: 0, uiPort: 0 });
    rmSync(devServerPaths(dir).serverFile);
    const b = await ensureDevServer({ stateDir: dir });
    expect(b).toMatchObject({ started: false, pid: a.pid, port: a.port, uiPort: a.uiPort });
    await stopDevServer(dir);
    expect(alive(a.pid)).toBe(false);
  });

  it('creates a non-default namespace, also on a reused server; keeps finished runs 30 days (REVERIFY_RETENTION_DAYS)', async () => {
    const dir = freshDir();
    const a = await ensureDevServer({ stateDir: dir, port: 0, uiPort: 0, namespace: 'reverify-a' });
    const b = await ensureDevServer({ stateDir: dir, namespace: 'reverify-b' });
    expect(b.started).toBe(false);
    const connection = await Connection.connect({ address: a.address });
    try {
      for (const namespace of ['reverify-a', 'reverify-b']) {
        const d = await connection.workflowService.describeNamespace({ namespace });
        expect(d.namespaceInfo?.name).toBe(namespace);
        // Finished runs are kept 30 days by default (issue 9 item 8), not start-dev's 1 day.
        expect(Number(d.config?.workflowExecutionRetentionTtl?.seconds)).toBe(30 * 24 * 3600);
      }
      // REVERIFY_RETENTION_DAYS changes it on the reused server.
      vi.stubEnv('REVERIFY_RETENTION_DAYS', '45');
      await ensureDevServer({ stateDir: dir, namespace: 'reverify-a' });
      const changed = await connection.workflowService.describeNamespace({ namespace: 'reverify-a' });
      expect(Number(changed.config?.workflowExecutionRetentionTtl?.seconds)).toBe(45 * 24 * 3600);
      vi.stubEnv('REVERIFY_RETENTION_DAYS', 'a month');
      await expect(ensureDevServer({ stateDir: dir })).rejects.toThrow(
        /REVERIFY_RETENTION_DAYS must be a whole number of days >= 1, got 'a month'/,
      );
    } finally {
      await connection.close();
    }
    await stopDevServer(dir);
  });

  it('a server that dies at startup gives a ConfigError naming the log file and its last lines', async () => {
    const dir = freshDir();
    const fake = join(dir, 'fake-temporal');
    writeFileSync(fake, '#!/bin/sh\necho "fake temporal: something is badly wrong" >&2\nexit 3\n');
    chmodSync(fake, 0o755);
    // Noticed as an exit (the message says so), not as a server that never became ready.
    const err = await ensureDevServer({ stateDir: dir, port: 0, uiPort: 0, binary: fake }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).toMatch(/^the Temporal dev server \(pid \d+\) exited with code 3 before it was ready; last lines of /);
    expect(message).toContain(devServerPaths(dir).logPath);
    expect(message).toContain('fake temporal: something is badly wrong');
    expect(existsSync(devServerPaths(dir).serverFile)).toBe(false);
  });

  it('a server that never becomes ready is killed after the deadline', async () => {
    const dir = freshDir();
    const fake = join(dir, 'slow-temporal');
    writeFileSync(
      fake,
      '#!/bin/sh\n[ "$1" = --version ] && { echo "temporal version 0.0.0"; exit 0; }\necho "starting forever"\nexec sleep 600\n',
    );
    chmodSync(fake, 0o755);
    const err = await ensureDevServer({ stateDir: dir, port: 0, uiPort: 0, binary: fake, readyTimeoutMs: 1_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/did not answer within 1 s; .*starting forever/s);
    expect(existsSync(devServerPaths(dir).serverFile)).toBe(false);
  });
});

describe('workflowUiUrl', () => {
  it('builds the workflow page URL, encoding the id', () => {
    expect(workflowUiUrl('http://127.0.0.1:8233', 'default', 'reverify:/data/out.jsonl')).toBe(
      'http://127.0.0.1:8233/namespaces/default/workflows/reverify%3A%2Fdata%2Fout.jsonl',
    );
    expect(workflowUiUrl('http://127.0.0.1:8233/', 'my ns', 'a b')).toBe('http://127.0.0.1:8233/namespaces/my%20ns/workflows/a%20b');
  });
});

describe('findTemporalBinary', () => {
  it('uses TEMPORAL_CLI_PATH when set, and refuses a missing one', () => {
    expect(findTemporalBinary({ TEMPORAL_CLI_PATH: BUNDLED_TEMPORAL_BINARY, PATH: '' })).toBe(BUNDLED_TEMPORAL_BINARY);
    expect(() => findTemporalBinary({ TEMPORAL_CLI_PATH: '/nonexistent/temporal', PATH: '' })).toThrow(ConfigError);
    expect(() => findTemporalBinary({ TEMPORAL_CLI_PATH: '/nonexistent/temporal', PATH: '' })).toThrow(
      /^TEMPORAL_CLI_PATH=\/nonexistent\/temporal is not an executable file/,
    );
  });

  it('falls back to the copy installed by npm ci', () => {
    expect(BUNDLED_TEMPORAL_BINARY).toBe(join(PROJECT_ROOT, '.temporal', 'bin', 'temporal'));
    expect(findTemporalBinary({ PATH: '' })).toBe(BUNDLED_TEMPORAL_BINARY);
  });
});

describe('stateDir', () => {
  it('REVERIFY_STATE_DIR, then XDG_STATE_HOME/reverify, then ~/.local/state/reverify; created on demand', () => {
    const base = freshDir();
    const explicit = join(base, 'a', 'b');
    expect(stateDir({ REVERIFY_STATE_DIR: explicit, XDG_STATE_HOME: join(base, 'x') })).toBe(explicit);
    expect(existsSync(explicit)).toBe(true);
    expect(stateDir({ XDG_STATE_HOME: join(base, 'x') })).toBe(join(base, 'x', 'reverify'));
    expect(existsSync(join(base, 'x', 'reverify'))).toBe(true);
    expect(stateDir({ HOME: base })).toBe(join(base, '.local', 'state', 'reverify'));
  });
});
