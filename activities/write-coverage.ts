/**
 * The coverage phase: counts the run's files and writes `<out stem>_coverage.json` atomically, when
 * the outputs open, at the end, and when the run fails or is cancelled. Returns the coverage (counts
 * only) for the end-of-run summary.
 */
import { dirname } from 'node:path';
import { coverageOf, capOf, type Coverage, type CoverageContext } from '../src/contract/coverage.js';
import { coveragePath } from '../src/contract/file-names.js';
import type { OutputPaths, RetryRules } from '../src/contract/run-spec.js';
import { writeCoverageFile } from '../src/io/coverage-file.js';
import { countCoverage } from '../src/planning/coverage-scan.js';
import { whileHeartbeating } from './heartbeating.js';

export interface CoverageRequest extends RetryRules {
  outputs: Pick<OutputPaths, 'output' | 'sidecar'>;
  context: Omit<CoverageContext, 'output' | 'failures' | 'retry_terminal_timeouts'>;
}

export function writeCoverage(req: CoverageRequest): Promise<Coverage> {
  return whileHeartbeating(async () => {
    const counts = await countCoverage(req.outputs, req, capOf(req.context.cap), dirname(req.outputs.output));
    const coverage = coverageOf(counts, {
      ...req.context,
      retry_terminal_timeouts: req.retryTerminalTimeouts === true,
      output: req.outputs.output,
      failures: req.outputs.sidecar,
    });
    await writeCoverageFile(coveragePath(req.outputs.output), coverage);
    return coverage;
  });
}
