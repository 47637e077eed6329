/**
 * `--order random` on `--resume`: the seed saved with the run (its coverage file, `plan_order`) is
 * reused unless `--seed` is given, so the rows still to do keep the order the run drew for them (a
 * task's rank depends only on the seed and the task: docs/usage.md "Order").
 */
import { coveragePath } from '../contract/file-names.js';
import { outputPathsFor } from '../contract/output-paths.js';
import type { RunSpec } from '../contract/run-spec.js';
import type { RunOptions } from '../config/run-options.js';
import { readCoverageFile } from '../io/coverage-file.js';

/** The spec with the saved seed in force when it resumes a random-order run without `--seed`. */
export async function withSavedOrder(spec: RunSpec, opts: Pick<RunOptions, 'orderSeed'>): Promise<RunSpec> {
  if (!spec.resume || spec.order !== 'random' || opts.orderSeed !== undefined) return spec;
  const saved = await readCoverageFile(coveragePath(outputPathsFor(spec.outputPath, spec.guarded?.prefix ?? '').output));
  const order = saved?.plan_order;
  if (order?.order !== 'random' || !Number.isSafeInteger(order.seed)) return spec;
  return { ...spec, orderSeed: order.seed };
}
