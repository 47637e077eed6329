/**
 * W&B for the tests: the `wandb` client scripts/install-wandb.sh installs into .wandb/venv (skipped
 * with the install's reason when PyPI could not be reached), and an offline run read back with W&B's
 * own record format (test/helpers/wandb-offline-read.py).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './worker-process.js';

const PYTHON = join(projectRoot, '.wandb', 'venv', 'bin', 'python');
const INSTALL_ERROR = join(projectRoot, '.wandb', 'install-error');

/** The venv's interpreter. */
export function wandbPython(): string {
  return PYTHON;
}

/** Why the W&B tests cannot run here, or null when the client is installed. */
export function wandbSkipReason(): string | null {
  if (existsSync(PYTHON)) return null;
  if (existsSync(INSTALL_ERROR)) return `W&B tests skipped: ${readFileSync(INSTALL_ERROR, 'utf8').trim()}`;
  return `W&B tests skipped: ${PYTHON} is missing; run scripts/install-wandb.sh (npm run setup:test runs it)`;
}

/** An offline run as its `.wandb` log holds it. */
export interface OfflineRun {
  run: { run_id: string; project: string; display_name: string };
  config: Record<string, unknown>;
  history: Array<Record<string, unknown>>;
  summary: Record<string, unknown>;
  /** `media/table/*.table.json` files by path. */
  tables: Record<string, { columns: string[]; data: unknown[][] }>;
}

/** The offline runs under a W&B dir (`<dir>/wandb/offline-run-*`), oldest first, read back. */
export function offlineRuns(wandbDir: string): OfflineRun[] {
  const root = join(wandbDir, 'wandb');
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => d.startsWith('offline-run-'))
    .sort()
    .map((d) => {
      const text = execFileSync(PYTHON, [join(projectRoot, 'test', 'helpers', 'wandb-offline-read.py'), join(root, d)], {
        encoding: 'utf8',
      });
      return JSON.parse(text) as OfflineRun;
    });
}
