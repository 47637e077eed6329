import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFileAtomic } from '../io/atomic-file.js';

const projectRoot = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/** Entry point of the workflow code (bundled by webpack, run in Temporal's sandbox). */
export const workflowsPath = join(projectRoot, 'workflows', 'index.ts');

/** Changed when the cached file's form changes, so that caches of the earlier form are rebuilt. */
const BUNDLE_FORM = 'empty-source-map';

/** The directories whose modules the workflow code may import (a test walks its imports to check). */
export const BUNDLE_SOURCE_DIRS = [dirname(workflowsPath), ...['contract', 'stats', 'config'].map((d) => join(projectRoot, 'src', d))];

/**
 * A hash of everything that can go into the bundle: the workflow sources, the pure modules they may
 * import (`BUNDLE_SOURCE_DIRS`), the SDK version, and the form of the cached file.
 */
function bundleHash(): string {
  const h = createHash('sha256').update(BUNDLE_FORM);
  for (const dir of BUNDLE_SOURCE_DIRS) {
    for (const f of readdirSync(dir).sort()) h.update(f).update(readFileSync(join(dir, f)));
  }
  h.update(readFileSync(join(projectRoot, 'node_modules', '@temporalio', 'workflow', 'package.json')));
  return h.digest('hex').slice(0, 16);
}

/** Where `npm run build` leaves the workflow bundle of the sources it built (scripts/build-cli.mjs). */
export const prebuiltBundleDir = join(projectRoot, 'dist', 'workflows');

/** The file name of the bundle of the current workflow code. */
export const workflowBundleName = () => `workflows-${bundleHash()}.js`;

/**
 * The workflow bundle of the current workflow code: the one `npm run build` made (`prebuiltDir`),
 * else one built once per version of the workflow code and cached under `cacheDir`, so a worker
 * starts in a fraction of a second instead of running webpack (5–6 s) each time. Either is named by
 * the hash of what went into it, so a bundle of other sources is never used.
 */
export async function workflowBundlePath(cacheDir: string, prebuiltDir = prebuiltBundleDir): Promise<string> {
  const name = workflowBundleName();
  const prebuilt = join(prebuiltDir, name);
  if (existsSync(prebuilt)) return prebuilt;
  const codePath = join(cacheDir, 'bundles', name);
  if (!existsSync(codePath)) await writeWorkflowBundle(codePath);
  return codePath;
}

/** Bundles the workflow code (webpack) into `codePath`, atomically. */
async function writeWorkflowBundle(codePath: string): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: quietLogger });
  await mkdir(dirname(codePath), { recursive: true });
  await writeFileAtomic(codePath, withEmptySourceMap(code, codePath));
}

/**
 * `npm run build`: the workflow bundle of the current sources into `dir` (`prebuiltBundleDir`), the
 * bundles of earlier sources there removed. Returns its path.
 */
export async function prebuildWorkflowBundle(dir = prebuiltBundleDir): Promise<string> {
  const name = workflowBundleName();
  const codePath = join(dir, name);
  if (!existsSync(codePath)) await writeWorkflowBundle(codePath);
  for (const f of readdirSync(dir)) if (f !== name && /^workflows-.*\.js$/.test(f)) rmSync(join(dir, f), { force: true });
  return codePath;
}

const SOURCE_MAP_COMMENT = '//# sourceMappingURL=data:application/json;base64,';

/**
 * The bundle with its inline source map replaced by an empty one naming the bundle's own path. The
 * SDK needs an inline map, and webpack's is 1.4 MB of base64 (the sources and 290 KB of mappings):
 * each worker decoded and parsed it, passed it to its workflow thread and into every workflow's
 * runtime, and the thread kept it parsed (a WebAssembly heap) to map the stack trace it takes of
 * every promise the workflow code makes. With an empty map a workflow stack trace (the UI's "Stack
 * Trace", a workflow bug's failure) names lines of the cached bundle, which holds each workflow
 * module's compiled code under its source path. The process's peak RSS is ≈ 5–10 MiB lower
 * (bench/ROUNDS.md, "Three rounds before").
 */
export function withEmptySourceMap(code: string, codePath: string): string {
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  if (at < 0) throw new Error('the workflow bundle has no inline source map');
  const map = { version: 3, file: codePath, sources: [], names: [], mappings: '' };
  return `${code.slice(0, at)}${SOURCE_MAP_COMMENT}${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
}

const noop = () => undefined;
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };
