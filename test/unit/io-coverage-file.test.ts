/**
 * The coverage file on disk (src/io/coverage-file.ts): a file another tool wrote without
 * `attempt_extension` reads as no extension (it must not stop `--resume`); a coverage that does not
 * reconcile is never written; one read back that does not reconcile is reported by `--resume`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { coverageOf, emptyCounts } from '../../src/contract/coverage.js';
import { readCoverageFile, writeCoverageFile } from '../../src/io/coverage-file.js';
import { withAttemptCap } from '../../src/cli/attempt-cap.js';
import type { RunSpec } from '../../src/contract/run-spec.js';
import type { RunOptions } from '../../src/config/run-options.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-coverage-file-');

const coverage = (expected: number) =>
  coverageOf(emptyCounts(), {
    run_id: 'wf',
    state: 'finished',
    expected,
    not_persisted: 0,
    outcomes_recorded: 0,
    cap: { max_rollout_attempts: 2, attempt_extension: 1 },
    retry_terminal_timeouts: false,
    dispatch_longest_first: false,
    output: '/o.jsonl',
    failures: '/o_failures.jsonl',
  });

describe('the coverage file', () => {
  it('reads a file without attempt_extension (another tool wrote it) as no extension', async () => {
    const path = join(tmp.freshDir(), 'out_coverage.json');
    writeFileSync(path, JSON.stringify({ schema_version: 2, max_rollout_attempts: 3, expected: 1, successful: 1 }));
    expect(await readCoverageFile(path)).toMatchObject({ max_rollout_attempts: 3, attempt_extension: 0 });
  });

  it('writes the new run store fields and never a coverage that does not reconcile', async () => {
    const dir = tmp.freshDir();
    const path = join(dir, 'out_coverage.json');
    await writeCoverageFile(path, coverage(2));
    const saved = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    expect(saved).toMatchObject({ selection_policy: 'latest_allocated', reconciled: true, expected: 2, never_dispatched: 2 });
    // Every field NeMo Gym users already read is still there.
    for (const k of ['schema_version', 'run_id', 'successful', 'failed', 'intentionally_omitted', 'unknown', 'counted_failures'])
      expect(saved).toHaveProperty(k);
    const broken = join(dir, 'broken_coverage.json');
    await expect(writeCoverageFile(broken, { ...coverage(2), successful: 1 })).rejects.toThrow(/does not reconcile/);
    expect(existsSync(broken)).toBe(false);
  });

  it('--resume reports a saved file that does not reconcile, and still uses its saved cap', async () => {
    const dir = tmp.freshDir();
    const output = join(dir, 'out.jsonl');
    const file = join(dir, 'out_coverage.json');
    writeFileSync(file, JSON.stringify({ ...coverage(5), successful: 3 }));
    const spec = { outputPath: output, resume: true, maxAttempts: 4 } as RunSpec;
    const r = await withAttemptCap(spec, {} as RunOptions, {});
    expect(r.spec.maxAttempts).toBe(3);
    expect(r.notices).toContain(
      `Warning: the coverage file ${file} does not reconcile (expected 5 != 8 = 3 successful + 0 failed + 0 intentionally_omitted + 0 unknown + 5 never_dispatched); ` +
        'its saved attempt cap is used, its counts are rewritten when the outputs open',
    );
  });
});
