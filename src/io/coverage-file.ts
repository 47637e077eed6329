/**
 * `<out stem>_coverage.json`: written atomically (temp, fsync, rename, directory fsync) as 2-space
 * JSON and a newline, only when it reconciles (src/contract/coverage-reconcile.ts); read back for the
 * attempt cap saved with the run (`--resume` uses it). A file without `attempt_extension` (one
 * another tool wrote) reads as no extension.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError } from '../contract/errors.js';
import type { AttemptCap, Coverage } from '../contract/coverage.js';
import { reconciliationGap } from '../contract/coverage-reconcile.js';
import { writeFileAtomic } from './atomic-file.js';

export async function writeCoverageFile(path: string, coverage: Coverage): Promise<void> {
  const gap = reconciliationGap(coverage);
  // Each expected rollout has one disposition by construction (coverageOf): a gap is a bug here.
  if (gap !== null || !coverage.reconciled) throw new Error(`internal error: the coverage for ${path} does not reconcile (${gap})`);
  return writeFileAtomic(path, JSON.stringify(coverage, null, 2) + '\n');
}

const savedCap = z.object({
  max_rollout_attempts: z.number().int().min(1),
  attempt_extension: z.number().int().min(0).default(0),
});

const savedCoverage = savedCap.loose();

/**
 * The coverage file at `path`, or null when there is none. A file that is not JSON, or lacks a
 * valid saved cap, is one clear line (exit 1): what, where, what to do.
 */
export async function readCoverageFile(path: string): Promise<(AttemptCap & Partial<Coverage>) | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(`the coverage file '${path}' cannot be read (${(err as NodeJS.ErrnoException).code}): check its permissions`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(
      `the coverage file '${path}' is not JSON (${(err as Error).message}): restore it, or delete it to use today's attempt cap`,
    );
  }
  const r = savedCoverage.safeParse(parsed);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ConfigError(
      `the coverage file '${path}' has no valid saved attempt cap (${issue.path.join('.') || 'root'}: ${issue.message}): ` +
        "restore it, or delete it to use today's attempt cap",
    );
  }
  return r.data;
}
