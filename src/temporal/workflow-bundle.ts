import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFileAtomic } from '../io/atomic-file.js';

const projectRoot = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/** Entry point of the workflow code (bundled by webpack, run in Temporal's sandbox). */
export const workflowsPath = join(projectRoot, 'workflows', 'index.ts');

/**
 * A hash of everything that can go into the bundle: the workflow sources, the pure modules they may
 * import (src/contract/), and the SDK version.
 */
function bundleHash(): string {
  const h = createHash('sha256');
  for (const dir of [dirname(workflowsPath), join(projectRoot, 'src', 'contract')]) {
    for (const f of readdirSync(dir).sort()) h.update(f).update(readFileSync(join(dir, f)));
  }
  h.update(readFileSync(join(projectRoot, 'node_modules', '@temporalio', 'workflow', 'package.json')));
  return h.digest('hex').slice(0, 16);
}

/**
 * The workflow bundle, built once per version of the workflow code and cached under `cacheDir`,
 * so a worker starts in a fraction of a second instead of re-running webpack each time.
 */
export async function workflowBundlePath(cacheDir: string): Promise<string> {
  const codePath = join(cacheDir, 'bundles', `workflows-${bundleHash()}.js`);
  if (!existsSync(codePath)) {
    const { code } = await bundleWorkflowCode({ workflowsPath, logger: quietLogger });
    await mkdir(dirname(codePath), { recursive: true });
    await writeFileAtomic(codePath, code);
  }
  return codePath;
}

const noop = () => undefined;
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };
