/**
 * The upload to Weights & Biases with W&B's own client (`wandb`, installed by
 * scripts/install-wandb.sh), in offline mode (WANDB_MODE=offline, WANDB_DIR in a temp dir): a sample
 * run with the wandb_* keys in its --config, its offline run read back from the `.wandb` log
 * (test/helpers/wandb-offline-read.py) and compared with what NeMo Gym 0.7.0's W&B exporter logs for
 * the same files: the masked config, one `Rollouts` table of orjson bytes (rows as real orjson writes
 * them, computed here in Python), the aggregate metrics in one step, the coverage in the next (with
 * the failure export metrics MLflow gets, src/contract/failure-export-metrics.ts). A W&B
 * client that cannot reach its server costs one warning line; the files and the exit status are as
 * without it, and `reverify upload --to wandb` uploads later.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { readRows, runArgs, runReverify, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { offlineRuns, wandbPython, wandbSkipReason, type OfflineRun } from '../helpers/wandb-offline.js';

const skip = wandbSkipReason();
if (skip !== null) console.log(skip);

const temporal = useSharedTemporal('upload-wandb');
const rs = useReferenceServer({ port: 0 });
const KEY = 'wandbkey-never-printed-0123456789abcdef0123456789';
const saved = { mode: process.env.WANDB_MODE, dir: process.env.WANDB_DIR };
beforeAll(() => {
  process.env.WANDB_MODE = 'offline';
});
afterAll(() => {
  for (const [k, v] of [
    ['WANDB_MODE', saved.mode],
    ['WANDB_DIR', saved.dir],
  ] as const)
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
});

function withWandb(config: string, extra = ''): string {
  const path = config.replace(/\.yaml$/, '-wandb.yaml');
  writeFileSync(path, readFileSync(config, 'utf8') + `\nwandb_project: proj\nwandb_name: reverify-run\nwandb_api_key: ${KEY}\n${extra}`);
  return path;
}

/** Capture shapes NeMo Gym's export rewrites, put on the first rows of an output (as a NeMo Gym collection's rows carry them). */
function addCaptures(output: string): void {
  const shapes = [
    {
      ng_model_call_capture: { rollout_id: 'r', calls: [{ id: 'c', request: { m: 1 }, response_raw: 'x', ms: 1.0 }, 3] },
      ng_trajectory: { t: 1 },
    },
    { ng_model_call_capture: { calls: 'not a list', n: 1 } },
    { ng_model_call_capture: null, ng_trajectory: null },
    { ng_model_call_capture: [{ request: 1 }] },
  ];
  const lines = readFileSync(output, 'utf8').split('\n');
  let i = 0;
  const out = lines.map((l) => (l.trim() && i < shapes.length ? JSON.stringify({ ...JSON.parse(l), ...shapes[i++] }) : l));
  writeFileSync(output, out.join('\n'));
}

/** What NeMo Gym's W&B table holds for the output: each row sorted, exported and written by the real orjson. */
function expectedCells(output: string): number[][] {
  const script = `
import sys, orjson
rows = [orjson.loads(l) for l in open(sys.argv[1], "rb") if l.strip()]
rows.sort(key=lambda r: (r["_ng_task_index"], r["_ng_rollout_index"]))
for r in rows:
    r.pop("ng_trajectory", None)
    c = r.pop("ng_model_call_capture", None)
    if isinstance(c, dict):
        if isinstance(c.get("calls"), list):
            c["calls"] = [{k: v for k, v in x.items() if k not in ("request", "response", "request_raw", "response_raw")} for x in c["calls"] if isinstance(x, dict)]
        else:
            c.pop("calls", None)
        r["ng_model_call_capture"] = c
    sys.stdout.buffer.write(orjson.dumps(list(orjson.dumps(r))) + b"\\n")
`;
  return execFileSync(wandbPython(), ['-c', script, output], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as number[]);
}

/** NeMo Gym's metric names and values for the aggregate metrics file (primitives, W&B keeps strings and null). */
function expectedMetrics(metricsPath: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const entry of JSON.parse(readFileSync(metricsPath, 'utf8')) as Array<Record<string, Record<string, unknown>>>) {
    const agent = String(entry.agent_ref.name);
    for (const [field, prefix] of [
      ['agent_metrics', `${agent}/`],
      ['key_metrics', `key_metrics/${agent}/`],
    ])
      for (const [k, v] of Object.entries(entry[field] ?? {})) if (v === null || typeof v !== 'object') out[prefix + k] = v;
  }
  return out;
}

/** The failure export metrics of a run without failure rows (src/contract/failure-export-metrics.ts). */
const NO_FAILURES = {
  'failures/failed_attempts': 0,
  'failures/failed_rollouts': 0,
  'failures/terminal': 0,
  'failures/retryable': 0,
  'failures/budget_exhausted': 0,
  'failures/intentionally_omitted': 0,
};

function withoutBookkeeping(item: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(item).filter(([k]) => !['_timestamp', '_runtime'].includes(k)));
}

function expectLoggedAsNemoGym(run: OfflineRun, output: string): void {
  const rows = readRows(output);
  expect(run.run).toMatchObject({ project: 'proj', display_name: 'reverify-run' });
  expect(run.config).toMatchObject({
    wandb_project: 'proj',
    wandb_name: 'reverify-run',
    wandb_api_key: '****',
    output_jsonl_fpath: output,
    upload_rollouts: true,
  });
  expect(run.history.map((h) => h._step)).toEqual([0, 1, 2]);
  expect(run.history[0]).toMatchObject({ 'Rollouts/_type': 'table-file', 'Rollouts/nrows': rows.length, 'Rollouts/ncols': 1 });
  const table = run.tables[run.history[0]['Rollouts/path'] as string];
  expect(table.columns).toEqual(['Rollout']);
  expect(table.data.map(([cell]) => cell)).toEqual(expectedCells(output));
  const metrics = withoutBookkeeping(run.history[1]);
  delete metrics._step;
  expect(metrics).toEqual(expectedMetrics(output.replace(/\.jsonl$/, '_aggregate_metrics.json')));
  expect(withoutBookkeeping(run.history[2])).toEqual({
    _step: 2,
    'coverage/expected': rows.length,
    'coverage/scored': rows.length,
    'coverage/missing': 0,
    ...NO_FAILURES,
  });
  expect(JSON.stringify(run)).not.toContain(KEY);
}

describe('upload to W&B (offline, read back with W&B records)', () => {
  // A part `npm run setup:test` installs: missing, every test here fails with what to run (never skipped).
  beforeAll(() => {
    if (skip !== null) throw new Error(skip);
  });
  it('logs the config, the Rollouts table and the metrics NeMo Gym logs; the key is nowhere', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 4, repeats: 2 });
    process.env.WANDB_DIR = tempDir('reverify-wandb-');
    const { error, lines } = await runReverify({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [withWandb(d.config)],
    });
    expect(error).toBeNull();
    expect(lines.filter((l) => /W&B/.test(l))).toEqual([
      expect.stringMatching(
        /^Uploaded to W&B: project proj, run \w+ \(8 rollouts in the Rollouts table, \d+ metrics\); offline: `wandb sync .*offline-run-/,
      ),
    ]);
    expect(lines.join('\n')).not.toContain(KEY);
    const runs = offlineRuns(process.env.WANDB_DIR);
    expect(runs).toHaveLength(1);
    expectLoggedAsNemoGym(runs[0], d.output);
  }, 180_000);

  it('a W&B server that cannot be reached: one warning, exit status and files as without it; `reverify upload --to wandb` uploads later', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 3, repeats: 2 });
    const config = withWandb(d.config);
    const env = {
      WANDB_MODE: 'online',
      WANDB_BASE_URL: 'http://127.0.0.1:9',
      WANDB_INIT_TIMEOUT: '5',
      WANDB_DIR: tempDir('reverify-wandb-'),
    };
    const r = await runCli([...runArgs({ ...d, config }), '--no-rejudge'], { ...temporal.env, ...env }, 120_000);
    expect(r.code, r.stderr).toBe(0);
    expect((r.stdout + r.stderr).split('\n').filter((l) => /W&B|wandb/i.test(l))).toEqual([
      expect.stringMatching(
        /^Warning: W&B upload failed \(opening the run\): .*127\.0\.0\.1:9.*; the outputs are complete: `reverify upload -o .*out\.jsonl --config \.\.\.` uploads them later$/,
      ),
    ]);
    expect(r.stdout + r.stderr).not.toContain(KEY);
    addCaptures(d.output);
    const before = readFileSync(d.output, 'utf8');

    const dir = tempDir('reverify-wandb-');
    const u = await runCli(
      ['upload', '-o', d.output, '--config', config, '--to', 'wandb'],
      { WANDB_MODE: 'offline', WANDB_DIR: dir },
      60_000,
    );
    expect(u.code, u.stderr).toBe(0);
    expect(u.stdout.trim()).toMatch(/^Uploaded to W&B: project proj, run \w+ \(6 rollouts in the Rollouts table, \d+ metrics\); offline: /);
    expectLoggedAsNemoGym(offlineRuns(dir)[0], d.output);
    expect(readFileSync(d.output, 'utf8')).toBe(before);
  }, 180_000);

  it('failure_export_metrics: the failures/* metrics MLflow gets, per class, retryable, budget exhausted at the saved cap', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 3, repeats: 2 });
    const r = await runCli([...runArgs(d), '--no-rejudge', '--max-attempts', '2'], temporal.env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    const key = (t: number, extra: string) => `{"_ng_task_index":${t},"_ng_rollout_index":0${extra}}\n`;
    // As in upload-mlflow.test.ts: task 0 scored after two judge failures; task 7 failed twice (at
    // the saved cap of 2, whatever the uploading environment says); task 8 once; task 9 omitted.
    writeFileSync(
      d.output.replace(/\.jsonl$/, '_failures.jsonl'),
      key(0, ',"_ng_failure_class":"judge_failed"').repeat(2) +
        key(7, ',"_ng_failure_class":"timeout"').repeat(2) +
        key(8, ',"_ng_failure_class":"judge_failed"') +
        key(9, ',"_ng_failure_class":"skipped","_ng_failure_terminal":true,"_ng_omitted":true,"_ng_failure_message":"stop rule"'),
    );
    const dir = tempDir('reverify-wandb-');
    const u = await runCli(
      ['upload', '-o', d.output, '--config', withWandb(d.config), '--to', 'wandb'],
      { WANDB_MODE: 'offline', WANDB_DIR: dir, NEMO_GYM_MAX_ROLLOUT_ATTEMPTS: '5' },
      60_000,
    );
    expect(u.code, u.stderr).toBe(0);
    const [run] = offlineRuns(dir);
    const last = run.history[run.history.length - 1];
    expect(Object.fromEntries(Object.entries(last).filter(([k]) => k.startsWith('failures/')))).toEqual({
      'failures/failed_attempts': 5,
      'failures/failed_attempts/judge_failed': 3,
      'failures/failed_attempts/timeout': 2,
      'failures/failed_rollouts': 2,
      'failures/terminal': 0,
      'failures/retryable': 1,
      'failures/budget_exhausted': 1,
      'failures/intentionally_omitted': 1,
    });
    expect(last['coverage/scored']).toBe(readRows(d.output).length);
  }, 180_000);

  it('upload_rollouts: false logs no table; incomplete wandb_* keys say what is missing and log nothing', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 2, repeats: 2 });
    process.env.WANDB_DIR = tempDir('reverify-wandb-');
    const off = await runReverify({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [withWandb(d.config, 'upload_rollouts: false\n')],
    });
    expect(off.error).toBeNull();
    const [run] = offlineRuns(process.env.WANDB_DIR);
    expect(run.history.map((h) => Object.keys(h).some((k) => k.startsWith('Rollouts')))).toEqual([false, false]);
    expect(run.config.upload_rollouts).toBe(false);

    const partial = d.config.replace(/\.yaml$/, '-partial.yaml');
    writeFileSync(partial, readFileSync(d.config, 'utf8') + '\nwandb_project: proj\n');
    process.env.WANDB_DIR = tempDir('reverify-wandb-');
    const saved = process.env.WANDB_API_KEY;
    delete process.env.WANDB_API_KEY;
    const r = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [partial], overwrite: true });
    if (saved !== undefined) process.env.WANDB_API_KEY = saved;
    expect(r.error).toBeNull();
    expect(r.lines.filter((l) => /W&B/.test(l))).toEqual([
      'Warning: wandb_project in --config but wandb_name, wandb_api_key missing: nothing goes to W&B. Set wandb_project, wandb_name and wandb_api_key (or WANDB_API_KEY).',
    ]);
    expect(offlineRuns(process.env.WANDB_DIR)).toEqual([]);

    // No W&B client where the command runs: the line says how to get one.
    const none = await runCli(['upload', '-o', d.output, '--config', withWandb(d.config)], {
      REVERIFY_WANDB_PYTHON: '/nonexistent/python3',
    });
    expect(none.code).toBe(2);
    expect(none.stderr.trim()).toBe(
      'Error: W&B upload failed (opening the run): cannot start /nonexistent/python3 (ENOENT): install the client with ' +
        '`bash scripts/install-wandb.sh` (or `pip install wandb`), or set REVERIFY_WANDB_PYTHON to a Python that has it',
    );
  }, 180_000);
});
