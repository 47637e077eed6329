/**
 * vitest globalSetup: ONE real Temporal dev server for the whole test run (sdk-typescript #876 and
 * the startup races of several `createLocal()` calls: temporal-notes §8). It runs on a fresh
 * temporary state dir and free ports, and is stopped at teardown.
 *
 * Tests get its address with `inject('temporalAddress')` and connect with
 * `TestWorkflowEnvironment.createFromExistingServer({ address })` or `Connection.connect`.
 * Use unique workflow ids and task queues per test: the server is shared.
 *
 * `REVERIFY_TEST_TEMPORAL_ADDRESS=host:port` uses an already running server instead;
 * `REVERIFY_TEST_NO_TEMPORAL=1` (`npm run test:unit`) starts none.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDevServer, stopDevServer } from '../src/temporal/dev-server/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `127.0.0.1:<port>` of the shared Temporal dev server. */
    temporalAddress: string;
    /** Namespace to use on it. */
    temporalNamespace: string;
    /** Base URL of its Web UI ('' when an external server is used). */
    temporalUiUrl: string;
  }
}

const PREFIX = 'reverify-vitest-';
const OWNER_FILE = 'owner.json';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // `npm run test:unit`: pure logic only, no server (an integration test run this way fails at its first inject).
  if (process.env.REVERIFY_TEST_NO_TEMPORAL) return () => Promise.resolve();
  const external = process.env.REVERIFY_TEST_TEMPORAL_ADDRESS;
  if (external) {
    project.provide('temporalAddress', external);
    project.provide('temporalNamespace', process.env.REVERIFY_TEST_TEMPORAL_NAMESPACE || 'default');
    project.provide('temporalUiUrl', '');
    return () => Promise.resolve();
  }

  await sweepAbandoned();
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  writeFileSync(join(dir, OWNER_FILE), JSON.stringify({ pid: process.pid }));
  const started = Date.now();
  let info;
  try {
    // port/uiPort 0: free ports chosen by the OS, never the user's 7233/8233.
    info = await ensureDevServer({ stateDir: dir, port: 0, uiPort: 0, readyTimeoutMs: 60_000 });
  } catch (err) {
    await stopDevServer(dir).catch(() => undefined);
    // The message already carries the server log's last lines.
    throw new Error(`globalSetup: could not start the Temporal dev server for the tests: ${(err as Error).message}`);
  }
  if (process.env.REVERIFY_TEST_VERBOSE) {
    console.log(`[global-setup] Temporal dev server ${info.address} (UI ${info.uiUrl}) ready in ${Date.now() - started} ms`);
  }
  project.provide('temporalAddress', info.address);
  project.provide('temporalNamespace', info.namespace);
  project.provide('temporalUiUrl', info.uiUrl);

  // If vitest dies without running the teardown, at least try to take the daemon down with it.
  const pid = info.pid;
  const onExit = (): void => {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  process.once('exit', onExit);

  return async () => {
    process.removeListener('exit', onExit);
    await stopDevServer(dir);
    rmSync(dir, { recursive: true, force: true });
  };
}

/** Stop servers left behind by earlier test runs whose vitest process is gone (SIGKILL, OOM). */
async function sweepAbandoned(): Promise<void> {
  let entries: string[];
  try {
    entries = readdirSync(tmpdir()).filter((e) => e.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const entry of entries) {
    const dir = join(tmpdir(), entry);
    let owner: number | undefined;
    try {
      owner = (JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as { pid?: number }).pid;
    } catch {
      continue; // not ours, or being created right now
    }
    if (owner !== undefined && isAlive(owner)) continue;
    await stopDevServer(dir).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
