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

const ONE_THREAD = { minBytes: Number.POSITIVE_INFINITY };

export function writeCoverage(req: CoverageRequest): Promise<Coverage> {
  return whileHeartbeating(async () => {
    // On one thread: in a run this count comes while the worker holds its heaps, and at 10^6 rows
    // the scan's second thread made it the run's peak. Counting a 10^6-row output alone takes
    // 157-161 MiB and 5.9-6.0 s on one thread, 183-194 MiB and 4.7 s on two: 1.3 s more at the
    // end of a 5-minute run. (`reverify status` counts with both.)
    const counts = await countCoverage(req.outputs, req, capOf(req.context.cap), dirname(req.outputs.output), ONE_THREAD);
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
