/**
 * The upload phase against a real MLflow tracking server (test/helpers/mlflow-server.ts): a sample
 * run with the mlflow_* keys in its --config, read back through MLflow's REST API and compared with
 * the run's files: metrics (`<agent>/<key>`, `key_metrics/<agent>/<key>`, coverage), tags, params,
 * the `rollouts.json` table. The token never enters the workflow history. A dead tracking URI costs
 * one warning line and changes neither the exit status nor the files; `reverify upload` uploads later.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sampleGymConfigYaml } from '../../src/demo/sample-data.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { runCli } from '../helpers/cli-process.js';
import { historyTextOf, withDecodedPayloads } from '../helpers/history-text.js';
import { freePort, mlflowSkipReason, useMlflowServer } from '../helpers/mlflow-server.js';
import { AGENTS, readRows, RS, runArgs, runReverify, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const skip = mlflowSkipReason();
if (skip !== null) console.log(skip);

const temporal = useSharedTemporal('upload-mlflow');
const client = useTemporalClient(temporal);
const rs = useReferenceServer({ port: 0 });
const mlflow = useMlflowServer();
const TOKEN = 'tok-3f9a-never-in-history';
/** Credentials in URLs, and secrets of the config (issue 35 item 3): none may leave the process. */
const PASSWORD = 'S3CRETMARKER';
const MARKERS = [PASSWORD, 'TOKENMARKER', 'PWMARKER'];
let seq = 0;

function withMlflow(config: string, uri: string, experiment: string, extra = ''): string {
  const path = config.replace(/\.yaml$/, `-mlflow${++seq}.yaml`);
  writeFileSync(
    path,
    readFileSync(config, 'utf8') +
      `\nmlflow_tracking_uri: ${uri}\nmlflow_experiment_name: ${experiment}\nmlflow_run_name: reverify-run\nmlflow_tracking_token: ${TOKEN}\n${extra}`,
  );
  return path;
}

async function api<T>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${mlflow()}/api/2.0/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as T;
}

interface ReadBack {
  status: string;
  metrics: Record<string, number>;
  tags: Record<string, string>;
  params: Record<string, string>;
  table: { columns: string[]; data: string[][] };
  config: Record<string, unknown>;
}

/** The one run of `experiment`, read back through the REST API. */
async function readBack(experiment: string): Promise<ReadBack> {
  const { experiment: e } = await api<{ experiment: { experiment_id: string } }>(
    `mlflow/experiments/get-by-name?experiment_name=${experiment}`,
  );
  const { runs } = await api<{
    runs: Array<{ info: { run_id: string; status: string; artifact_uri: string }; data: Record<string, Array<Record<string, unknown>>> }>;
  }>('mlflow/runs/search', { experiment_ids: [e.experiment_id] });
  expect(runs).toHaveLength(1);
  const run = runs[0];
  const pairs = (list: Array<Record<string, unknown>> = []) => Object.fromEntries(list.map((x) => [x.key, x.value]));
  const artifacts = run.info.artifact_uri.replace(/^mlflow-artifacts:\/*/, '');
  const artifact = async (name: string) =>
    await (await fetch(`${mlflow()}/api/2.0/mlflow-artifacts/artifacts/${artifacts}/${name}`)).text();
  return {
    status: run.info.status,
    metrics: pairs(run.data.metrics) as Record<string, number>,
    tags: pairs(run.data.tags) as Record<string, string>,
    params: pairs(run.data.params) as Record<string, string>,
    table: JSON.parse(await artifact('rollouts.json')),
    config: JSON.parse(await artifact('global_config.json')),
  };
}

/** What the files say MLflow must hold: NeMo Gym's names for the metrics file's entries, and coverage. */
function expectedMetrics(metricsPath: string, scored: number, missing: number): Record<string, number> {
  const out: Record<string, number> = {};
  const name = (k: string) => k.replaceAll('@', '_at_').replace(/[^/\w.\- :]/g, '_');
  for (const entry of JSON.parse(readFileSync(metricsPath, 'utf8')) as Array<Record<string, Record<string, unknown>>>) {
    const agent = String(entry.agent_ref.name);
    for (const [k, v] of Object.entries(entry.agent_metrics)) if (typeof v === 'number') out[name(`${agent}/${k}`)] = v;
    for (const [k, v] of Object.entries(entry.key_metrics)) if (typeof v === 'number') out[name(`key_metrics/${agent}/${k}`)] = v;
  }
  return { ...out, 'coverage/expected': scored + missing, 'coverage/scored': scored, 'coverage/missing': missing, ...NO_FAILURES };
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

/** The main output's rows sorted by key, without ng_trajectory, as the table holds them. */
function expectedRows(output: string): unknown[] {
  return readRows(output)
    .sort(
      (a, b) =>
        (a._ng_task_index as number) - (b._ng_task_index as number) || (a._ng_rollout_index as number) - (b._ng_rollout_index as number),
    )
    .map(({ ng_trajectory: _, ...rest }) => rest);
}

function expectUploadedAsFilesSay(back: ReadBack, output: string): void {
  const rows = readRows(output);
  expect(back.status).toBe('FINISHED');
  expect(back.metrics).toEqual(expectedMetrics(output.replace(/\.jsonl$/, '_aggregate_metrics.json'), rows.length, 0));
  expect(back.tags['mlflow.runName']).toBe('reverify-run');
  expect(JSON.parse(back.tags['mlflow.loggedArtifacts'])).toEqual([{ path: 'rollouts.json', type: 'table' }]);
  expect(back.table.columns).toEqual(['Rollout']);
  expect(back.table.data.map(([json]) => JSON.parse(json))).toEqual(expectedRows(output));
  expect(back.config.mlflow_tracking_token).toBe('****');
  expect(back.params.mlflow_tracking_token).toBe('****');
}

function filesOf(dir: string): Record<string, number> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, statSync(join(dir, f)).size]));
}

describe('upload to a real MLflow tracking server', () => {
  // A part `npm run setup:test` installs: missing, every test here fails with what to run (never skipped).
  beforeAll(() => {
    if (skip !== null) throw new Error(skip);
  });
  it('uploads the metrics, coverage and rollouts.json NeMo Gym uploads; the token is not in the workflow history', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 6, repeats: 2 });
    const config = withMlflow(d.config, mlflow(), 'exp-run');
    const { error, lines } = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [config] });
    expect(error).toBeNull();
    expect(lines.filter((l) => l.startsWith('Uploaded to MLflow'))).toEqual([
      expect.stringMatching(/^Uploaded to MLflow: run \w+ \(12 rollouts in rollouts.json, \d+ metrics\)$/),
    ]);
    const back = await readBack('exp-run');
    expectUploadedAsFilesSay(back, d.output);
    expect(Object.keys(back.metrics)).toEqual(expect.arrayContaining(['agent_a/mean/reward', 'key_metrics/agent_a/mean/reward']));
    const history = JSON.stringify(await client().workflow.getHandle(workflowIdForOutput(d.output)).fetchHistory());
    const decoded = history.replace(/"data":"([A-Za-z0-9+/=]*)"/g, (_m, b64: string) => Buffer.from(b64, 'base64').toString('utf8'));
    expect(decoded).toContain('upload: rollouts.json');
    expect(history + decoded).not.toContain(TOKEN);
  }, 120_000);

  it('a dead tracking URI: one warning line, exit status and files as without upload; `reverify upload` uploads the run later', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 4, repeats: 2 });
    const dead = withMlflow(d.config, `http://127.0.0.1:${await freePort()}`, 'exp-later');
    const r = await runCli([...runArgs({ ...d, config: dead }), '--no-rejudge'], temporal.env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    const warnings = (r.stdout + r.stderr).split('\n').filter((l) => /MLflow|upload/i.test(l));
    expect(warnings).toEqual([
      expect.stringMatching(
        /^Warning: MLflow upload failed \(opening the run\): cannot reach the MLflow tracking server http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED.*reverify upload -o /,
      ),
    ]);
    const dir = join(d.output, '..');
    const files = filesOf(dir);
    expect(Object.keys(files)).toEqual(expect.arrayContaining(['out.jsonl', 'out_failures.jsonl', 'out_aggregate_metrics.json']));

    const live = withMlflow(d.config, mlflow(), 'exp-later');
    const u = await runCli(['upload', '-o', d.output, '--config', live], {}, 60_000);
    expect(u.code, u.stderr).toBe(0);
    expect(u.stdout.trim()).toMatch(
      /^Uploaded to MLflow at http:\/\/127\.0\.0\.1:\d+: run \w+ \(8 rollouts in rollouts.json, \d+ metrics\)$/,
    );
    expectUploadedAsFilesSay(await readBack('exp-later'), d.output);
    // The upload only read the files.
    expect(filesOf(dir)).toEqual({ ...files, [live.split('/').pop()!]: statSync(live).size });
  }, 180_000);

  it('failure_export_metrics: failure totals per class over the history, retryable, budget exhausted at the saved cap, omissions', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 3, repeats: 2 });
    const r = await runCli([...runArgs(d), '--no-rejudge', '--max-attempts', '2'], temporal.env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    const key = (t: number, extra: string) => `{"_ng_task_index":${t},"_ng_rollout_index":0${extra}}\n`;
    const sidecar = d.output.replace(/\.jsonl$/, '_failures.jsonl');
    // Task 0 was scored after two judge failures (history); task 7 failed twice (at the saved cap
    // of 2, whatever the environment of `reverify upload` says); task 8 once; task 9 is an omission.
    writeFileSync(
      sidecar,
      key(0, ',"_ng_failure_class":"judge_failed"').repeat(2) +
        key(7, ',"_ng_failure_class":"timeout"').repeat(2) +
        key(8, ',"_ng_failure_class":"judge_failed"') +
        key(9, ',"_ng_failure_class":"skipped","_ng_failure_terminal":true,"_ng_omitted":true,"_ng_failure_message":"stop rule"'),
    );
    const live = withMlflow(d.config, mlflow(), 'exp-failures');
    const u = await runCli(['upload', '-o', d.output, '--config', live], { NEMO_GYM_MAX_ROLLOUT_ATTEMPTS: '5' }, 60_000);
    expect(u.code, u.stderr).toBe(0);
    const failures = Object.fromEntries(
      Object.entries((await readBack('exp-failures')).metrics).filter(([k]) => k.startsWith('failures/')),
    );
    expect(failures).toEqual({
      'failures/failed_attempts': 5,
      'failures/failed_attempts/judge_failed': 3,
      'failures/failed_attempts/timeout': 2,
      'failures/failed_rollouts': 2,
      'failures/terminal': 0,
      'failures/retryable': 1,
      'failures/budget_exhausted': 1,
      'failures/intentionally_omitted': 1,
    });
  }, 180_000);

  it('a tracking URI with user:password@ uploads (Basic auth); the password is nowhere: terminal, history, history file, report, MLflow', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 3, repeats: 2 });
    const config = withMlflow(d.config, mlflow().replace('http://', `http://mlflowuser:${PASSWORD}@`), 'exp-userinfo');
    const r = await runCli([...runArgs({ ...d, config }), '--no-rejudge'], temporal.env, 120_000);
    expect(r.code, r.stderr).toBe(0);
    const dir = join(d.output, '..');
    expect(await historyTextOf(client(), d.output)).not.toContain(PASSWORD);
    expect(withDecodedPayloads(readFileSync(join(dir, 'out_history.json'), 'utf8'))).not.toContain(PASSWORD);
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(r.stdout).toMatch(/^Uploaded to MLflow: run \w+ \(6 rollouts in rollouts.json, \d+ metrics\)$/m);
    const back = await readBack('exp-userinfo');
    expect(back.params.mlflow_tracking_uri).toBe(mlflow().replace('http://', 'http://***@'));
    expect(JSON.stringify(back)).not.toContain(PASSWORD);
    expect(readFileSync(join(dir, 'out_report.html'), 'utf8')).not.toContain(PASSWORD);
    // `reverify upload` says where it uploaded without the password.
    const u = await runCli(['upload', '-o', d.output, '--config', config], {}, 60_000);
    expect(u.code, u.stderr).toBe(0);
    expect(u.stdout.trim()).toMatch(/^Uploaded to MLflow at http:\/\/\*\*\*@127\.0\.0\.1:\d+: run \w+ /);
    expect(u.stdout + u.stderr).not.toContain(PASSWORD);
  }, 180_000);

  it('the exported config masks every secret at any depth, keys kept: a host with user:password@, a nested Authorization, *_password', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 3, repeats: 2 });
    // The resources server's host carries credentials (sent as Basic auth, which the reference server ignores).
    writeFileSync(
      d.config,
      sampleGymConfigYaml({ resourcesServer: RS, host: `judge:${PASSWORD}@127.0.0.1`, port: rs().port, agents: AGENTS }),
    );
    const secrets =
      'judge_client:\n  headers:\n    Authorization: Bearer TOKENMARKER\n  db_password: PWMARKER\n' +
      `  base_url: https://u:${PASSWORD}@llm.internal/v1\n  temperature: 0.5\n`;
    const config = withMlflow(d.config, mlflow(), 'exp-masked', secrets);
    const { error, lines } = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [config] });
    expect(error).toBeNull();
    const back = await readBack('exp-masked');
    expect(back.config.judge_client).toEqual({
      headers: { Authorization: '****' },
      db_password: '****',
      base_url: 'https://***@llm.internal/v1',
      temperature: 0.5,
    });
    expect((back.config[RS] as { resources_servers: { mcqa: { host: string } } }).resources_servers.mcqa.host).toBe('***@127.0.0.1');
    expect(back.params).toMatchObject({
      'judge_client.headers.Authorization': '****',
      'judge_client.db_password': '****',
      'judge_client.base_url': 'https://***@llm.internal/v1',
      'judge_client.temperature': '0.5',
      [`${RS}.resources_servers.mcqa.host`]: '***@127.0.0.1',
    });
    for (const marker of MARKERS) {
      expect(JSON.stringify(back)).not.toContain(marker);
      expect(lines.join('\n')).not.toContain(marker);
      expect(await historyTextOf(client(), d.output)).not.toContain(marker);
    }
  }, 120_000);

  it('--no-upload uploads nothing; upload_rollouts: false uploads the metrics without the table', async () => {
    const d = await sampleRun(tempDir(), rs().port, { tasks: 3, repeats: 2 });
    const off = withMlflow(d.config, mlflow(), 'exp-off');
    const none = await runReverify({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [off], upload: false });
    expect(none.error).toBeNull();
    const exists = await fetch(`${mlflow()}/api/2.0/mlflow/experiments/get-by-name?experiment_name=exp-off`);
    expect(exists.status).toBe(404);

    const metricsOnly = withMlflow(d.config, mlflow(), 'exp-metrics-only', 'upload_rollouts: false\nwandb_project: p\nwandb_api_key: k\n');
    const r = await runReverify({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [metricsOnly],
      overwrite: true,
    });
    expect(r.error).toBeNull();
    expect(r.lines.filter((l) => l.includes('W&B'))).toEqual([
      'Warning: wandb_project, wandb_api_key in --config but wandb_name missing: nothing goes to W&B. Set wandb_project, wandb_name and wandb_api_key (or WANDB_API_KEY).',
    ]);
    const { experiment: e } = await api<{ experiment: { experiment_id: string } }>(
      'mlflow/experiments/get-by-name?experiment_name=exp-metrics-only',
    );
    const { runs } = await api<{ runs: Array<{ data: { metrics: unknown[]; tags: Array<{ key: string }> } }> }>('mlflow/runs/search', {
      experiment_ids: [e.experiment_id],
    });
    expect(runs[0].data.metrics.length).toBeGreaterThan(3);
    expect(runs[0].data.tags.map((t) => t.key)).not.toContain('mlflow.loggedArtifacts');
  }, 120_000);
});
