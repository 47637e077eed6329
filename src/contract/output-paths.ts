import { aggregateMetricsPath, prefixedOutputPath, sidecarPath, workDirPath } from './file-names.js';
import type { OutputPaths } from './run-spec.js';

/** The output paths of a run, with the guard's prefix applied to the basename (spec §1.1, §4.4). */
export function outputPathsFor(outputPath: string, prefix: string): OutputPaths {
  const output = prefixedOutputPath(outputPath, prefix);
  return {
    output,
    sidecar: sidecarPath(output),
    metrics: aggregateMetricsPath(output),
    workDir: workDirPath(output),
  };
}
