/**
 * Starts a `worker_threads` thread on one of the project's thread modules, wherever the code runs
 * from: from the bundle (dist/cli/, where `scripts/build-cli.mjs` writes each thread module beside
 * `main.mjs`), or from the TypeScript sources (tests, `REVERIFY_FROM_SOURCE=1`), through tsx's
 * require hook, since Node 20's module hooks do not reach a thread.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * `name` is the module's file name without extension, in the same directory as the caller's
 * module (`callerUrl`: its `import.meta.url`) in the sources.
 */
export function startThread(callerUrl: string, name: string, options: WorkerOptions): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.mjs`, callerUrl), options);
  const tsx = createRequire(callerUrl).resolve('tsx/cjs/api');
  const source = fileURLToPath(new URL(`./${name}.ts`, callerUrl));
  return new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(source)});`, { ...options, eval: true });
}
