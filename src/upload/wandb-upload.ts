/**
 * The upload of a finished run to Weights & Biases, as NeMo Gym 0.7.0's W&B exporter logs a
 * reverification (spec §4.12): W&B's own Python client (`wandb`) does the logging, in a child
 * process running scripts/wandb-upload.py; this side prepares what it logs: the masked config (as
 * for MLflow), the exported rows sorted and sanitised (as in `rollouts.json`), the aggregate
 * metrics' names (as for MLflow, before MLflow's renaming), the coverage metrics and the failure
 * export metrics (src/upload/failure-metrics.ts, the same function as for MLflow). The API key
 * goes to the child in its environment only. `WANDB_MODE`, `WANDB_DIR`, `WANDB_BASE_URL` and the
 * other `WANDB_*` variables reach the client unchanged.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redactUserinfo } from '../contract/secrets.js';
import type { WandbLogged } from '../contract/run-result.js';
import { withScratchDir } from '../io/scratch-dir.js';
import { failureMetricsOfRun } from './failure-metrics.js';
import { coverageMetrics, exportedMetricPicks } from './metric-names.js';
import { ROW_LINES, writeRolloutsTable } from './rollouts-table.js';
import { exportedConfig, type UploadRequest } from './upload-run.js';
import { loadUploadConfig, type WandbTarget } from './upload-config.js';

/** The interpreter with `wandb`: REVERIFY_WANDB_PYTHON, else the project's .wandb venv, else python3. */
export const WANDB_PYTHON_ENV = 'REVERIFY_WANDB_PYTHON';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts', 'wandb-upload.py');

export function wandbPython(env: NodeJS.ProcessEnv = process.env): string {
  const venv = join(ROOT, '.wandb', 'venv', 'bin', 'python');
  return env[WANDB_PYTHON_ENV] || (existsSync(venv) ? venv : 'python3');
}

/** What the W&B upload logged. */
export type WandbUploaded = WandbLogged;

/** A W&B upload that failed at `step`. */
export class WandbUploadError extends Error {
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(message);
  }
}

const INSTALL_HINT = `install the client with \`bash scripts/install-wandb.sh\` (or \`pip install wandb\`), or set ${WANDB_PYTHON_ENV} to a Python that has it`;

function runScript(python: string, spec: unknown, apiKey: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [SCRIPT], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { WANDB_SILENT: 'true', ...process.env, WANDB_API_KEY: apiKey },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(new WandbUploadError('opening the run', `cannot start ${python} (${e.code ?? e.message}): ${INSTALL_HINT}`)),
    );
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(spec));
  });
}

/** The metric picks of the aggregate metrics file, or null when there is none (nothing is logged for it). */
async function metricPicks(path: string | null): Promise<Array<[string, number, string, string]> | null> {
  if (path === null) return null;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const entries = JSON.parse(text) as unknown;
  return exportedMetricPicks(Array.isArray(entries) ? entries : []).map((p) => [p.name, p.entry, p.field, p.key]);
}

/**
 * Logs the run to W&B: config, `Rollouts` table (when `uploadRows`), aggregate metrics (when the
 * file is there), then coverage and failure export metrics together.
 */
export async function uploadToWandb(
  req: UploadRequest,
  target: WandbTarget,
  coverage: { scored: number; missing: number },
  opts: { uploadRows: boolean; metricsFile: string | null },
): Promise<WandbUploaded> {
  const config = await loadUploadConfig(req.configs);
  const python = wandbPython();
  return withScratchDir(tmpdir(), 'reverify-wandb-', async (dir) => {
    const rowsFile = join(dir, 'rows.jsonl');
    const rows = opts.uploadRows ? await writeRolloutsTable(req.output, rowsFile, dir, { format: ROW_LINES }) : null;
    const spec = {
      project: target.project,
      name: target.name,
      dir: target.resultsDir === null ? null : join(target.resultsDir, 'wandb'),
      config: exportedConfig(config, req),
      rollouts: rows === null ? null : rowsFile,
      metrics_file: opts.metricsFile,
      metric_picks: await metricPicks(opts.metricsFile),
      coverage: [...coverageMetrics(coverage.scored, coverage.missing)],
      failures: [...(await failureMetricsOfRun(req.output))],
    };
    const r = await runScript(python, spec, target.apiKey);
    const last = r.out.trim().split('\n').pop() ?? '';
    let answer: Record<string, unknown> | null = null;
    try {
      answer = last.startsWith('{') ? (JSON.parse(last) as Record<string, unknown>) : null;
    } catch {
      answer = null;
    }
    if (answer === null || r.code !== 0) {
      const step = typeof answer?.step === 'string' ? answer.step : 'opening the run';
      const why = typeof answer?.error === 'string' ? answer.error : (r.err.trim().split('\n').pop() ?? `exit status ${r.code}`);
      throw new WandbUploadError(step, /No module named 'wandb'/.test(why) ? `${python} has no wandb: ${INSTALL_HINT}` : why);
    }
    return {
      project: target.project,
      runId: String(answer.run_id),
      runDir: String(answer.run_dir),
      offline: answer.offline === true,
      rows: typeof answer.rows === 'number' ? answer.rows : null,
      metrics: Number(answer.metrics),
    };
  });
}

/** The one-line reason of a failed W&B upload. */
export function wandbFailure(err: unknown): string {
  const step = (err as { step?: unknown }).step;
  return `W&B upload failed (${typeof step === 'string' ? step : 'opening the run'}): ${redactUserinfo((err as Error).message)}`;
}

/** The line that says where the W&B upload went. */
export function wandbUploadedLine(u: WandbUploaded): string {
  const what = [u.rows === null ? null : `${u.rows} rollouts in the Rollouts table`, `${u.metrics} metrics`].filter(Boolean).join(', ');
  const where = u.offline ? `; offline: \`wandb sync ${u.runDir}\` uploads it` : '';
  return `Uploaded to W&B: project ${u.project}, run ${u.runId} (${what})${where}`;
}
