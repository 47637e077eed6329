/**
 * The W&B upload at the end of `reverify run` (spec §4.12): when the `--config` files configure
 * W&B and `--no-upload` is not given, the command that followed the run to its end logs it to W&B
 * from the files (src/upload/wandb-upload.ts: W&B's own client in a child process, which workflow
 * workers need not have). Its outcome is one line of the summary: where it went, or the warning
 * (the outputs are complete either way; `reverify upload --to wandb` uploads later).
 */
import { resolve } from 'node:path';
import type { RunResult } from '../contract/run-spec.js';
import type { RunOptions } from '../config/run-options.js';
import { coverageFromFiles } from '../upload/coverage-from-files.js';
import type { UploadConfig } from '../upload/upload-config.js';
import { uploadToWandb, wandbUploadedLine } from '../upload/wandb-upload.js';
import { exportedRunOptions } from './build-spec.js';
import { wandbFailure } from './upload-command.js';

/** The W&B upload's line for the summary: `line` when it went, `warning` when it failed. */
export type WandbOutcome = { line: string; warning?: undefined } | { warning: string; line?: undefined };

/**
 * Uploads the finished run to W&B when the config (`config`, read once by the command; null with
 * --no-upload or no --config) asks for it; null when it does not.
 */
export async function wandbAfterRun(opts: RunOptions, config: UploadConfig | null, result: RunResult): Promise<WandbOutcome | null> {
  if (config === null || config.wandb === null) return null;
  const { output, sidecar } = result.outputs;
  const req = {
    output,
    metrics: result.outputs.metrics,
    configs: opts.configs.map((c) => resolve(c)),
    options: exportedRunOptions(opts, config.uploadRollouts),
  };
  try {
    const coverage =
      typeof result.scored === 'number' && typeof result.missing === 'number'
        ? { scored: result.scored, missing: result.missing }
        : await coverageFromFiles(output, sidecar);
    const uploaded = await uploadToWandb(req, config.wandb, coverage, {
      uploadRows: config.uploadRollouts,
      metricsFile: result.metricsPath ?? null,
    });
    return { line: wandbUploadedLine(uploaded) };
  } catch (err) {
    return { warning: wandbFailure(err) };
  }
}
