/** What NeMo Gym 0.7.0 exports to MLflow: row sanitising, metric names, table and config text. */
import { describe, expect, it } from 'vitest';
import { exportedMetrics, mlflowEntries, mlflowKey, coverageMetrics } from '../../src/upload/metric-names.js';
import { pandasJsonString, TABLE_HEAD, TABLE_TAIL, tableRow } from '../../src/upload/table-json.js';
import { configArtifactText, configParams } from '../../src/upload/global-config.js';
import { hideSecrets } from '../../src/contract/secrets.js';
import { uploadConfigOf } from '../../src/upload/upload-config.js';
import { uploadWarningLine } from '../../src/cli/run-summary.js';
import { wandbFailure } from '../../src/upload/wandb-upload.js';
import { wandbUploadedLine } from '../../src/upload/wandb-upload.js';

describe('metric names (spec §3.9) and MLflow rules', () => {
  it('spells @ as _at_, replaces other characters, neutralises path segments, keeps Unicode letters', () => {
    expect(mlflowKey('key_metrics/agent/pass@1/accuracy')).toBe('key_metrics/agent/pass_at_1/accuracy');
    expect(mlflowKey('a/pass@1[avg-of-2]/x')).toBe('a/pass_at_1_avg-of-2_/x');
    expect(mlflowKey('//a//../.b/')).toBe('a/__/.b'); // as NeMo Gym 0.7.0 (checked against its code)
    expect(mlflowKey('...x/y')).toBe('___x/y');
    expect(mlflowKey('café: ok')).toBe('café: ok');
    expect(mlflowKey('///')).toBeNull();
  });

  it('elides names over 250 characters in the middle, head biased', () => {
    const long = 'h'.repeat(200) + 't'.repeat(200);
    const k = mlflowKey(long)!;
    expect(k).toHaveLength(250);
    expect(k).toBe('h'.repeat(124) + '___' + 't'.repeat(123));
  });

  it('exports <agent>/<key> and key_metrics/<agent>/<key> of primitive values; numbers as metrics, strings as tags, null dropped', () => {
    const m = exportedMetrics([
      {
        agent_ref: { name: 'ag' },
        agent_metrics: { 'mean/reward': 0.5, n: 4, ok: true, s: 'txt', none: null, obj: { a: 1 } },
        key_metrics: { 'pass@1': 75 },
      },
    ]);
    expect([...m.keys()]).toEqual(['ag/mean/reward', 'ag/n', 'ag/ok', 'ag/s', 'ag/none', 'key_metrics/ag/pass@1']);
    expect(mlflowEntries(m)).toEqual({
      metrics: [
        ['ag/mean/reward', 0.5],
        ['ag/n', 4],
        ['ag/ok', 1],
        ['key_metrics/ag/pass_at_1', 75],
      ],
      tags: [['ag/s', 'txt']],
    });
    expect([...coverageMetrics(9, 1)]).toEqual([
      ['coverage/expected', 10],
      ['coverage/scored', 9],
      ['coverage/missing', 1],
    ]);
  });
});

describe('rollouts.json as pandas writes it', () => {
  it('escapes / and non-ASCII as to_json(orient="split") does', () => {
    expect(pandasJsonString('\u007f\u0080 \u2028 😀 <&> \u001f/')).toBe('"\u007f\\u0080 \\u2028 \\ud83d\\ude00 <&> \\u001f\\/"');
    expect(TABLE_HEAD + tableRow('{"a":1}', 0) + tableRow('{}', 1) + TABLE_TAIL).toBe(
      '{"columns":["Rollout"],"data":[["{\\"a\\":1}"],["{}"]]}',
    );
  });
});

describe('the exported config', () => {
  it('masks secret-looking keys, flattens params as Python str(), and writes json.dump(indent=2) text', () => {
    const masked = hideSecrets({
      mlflow_tracking_token: 't0ken',
      nested: { api_key: 'k', n: 1, flag: true, l: [{ header_x: 'h' }, 2] },
      keys: ['a'],
    });
    expect(masked).toEqual({
      mlflow_tracking_token: '****',
      nested: { api_key: '****', n: 1, flag: true, l: [{ header_x: '****' }, 2] },
      keys: ['****'],
    });
    expect(configParams({ a: { b: null, c: [true, 'x@y'] } })).toEqual([
      ['a.b', 'None'],
      ['a.c_0_', 'True'],
      ['a.c_1_', 'x@y'],
    ]);
    expect(configArtifactText({ é: [1, {}] })).toBe('{\n  "\\u00e9": [\n    1,\n    {}\n  ]\n}');
  });

  it('opens MLflow only when the URI, experiment and run name are set and the token is not masked; upload_rollouts defaults to true', () => {
    const full = { mlflow_tracking_uri: 'http://h', mlflow_experiment_name: 'e', mlflow_run_name: 'r' };
    expect(uploadConfigOf({ data: full, origins: {} }).mlflow).toEqual({ trackingUri: 'http://h', experimentName: 'e', runName: 'r' });
    expect(uploadConfigOf({ data: { ...full, mlflow_tracking_token: '****' }, origins: {} }).mlflow).toBeNull();
    expect(uploadConfigOf({ data: { mlflow_tracking_uri: 'http://h' }, origins: {} }).mlflow).toBeNull();
    expect(uploadConfigOf({ data: full, origins: {} }).uploadRollouts).toBe(true);
    expect(uploadConfigOf({ data: { upload_rollouts_to_wandb: false }, origins: {} }).uploadRollouts).toBe(false);
    expect(uploadConfigOf({ data: { upload_rollouts_to_wandb: false, upload_rollouts: true }, origins: {} }).uploadRollouts).toBe(true);
    expect(uploadConfigOf({ data: { wandb_project: 'p', wandb_api_key: 'k' }, origins: {} }).wandbKeys).toEqual([
      'wandb_project',
      'wandb_api_key',
    ]);
  });

  it('W&B opens with project, name and a key (from the config or WANDB_API_KEY), not with a masked key', () => {
    const w = { wandb_project: 'p', wandb_name: 'n' };
    const of = (data: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => uploadConfigOf({ data, origins: {} }, env).wandb;
    expect(of({ ...w, wandb_api_key: 'k', results_dir: '/r' })).toEqual({ project: 'p', name: 'n', apiKey: 'k', resultsDir: '/r' });
    expect(of(w, { WANDB_API_KEY: 'e' })).toEqual({ project: 'p', name: 'n', apiKey: 'e', resultsDir: null });
    expect(of(w)).toBeNull();
    expect(of({ ...w, wandb_api_key: '****' }, { WANDB_API_KEY: 'e' })).toBeNull();
    expect(of({ wandb_project: 'p', wandb_api_key: 'k' })).toBeNull();
  });
});

describe('the upload lines of the summary', () => {
  it('a failed upload: the warning, the outputs complete, and the command that uploads later (to that tracker when both are configured)', () => {
    expect(uploadWarningLine('W&B upload failed (metrics): boom', '/r/out.jsonl', 'wandb')).toBe(
      'Warning: W&B upload failed (metrics): boom; the outputs are complete: `reverify upload -o /r/out.jsonl --config ... --to wandb` uploads them later',
    );
    expect(uploadWarningLine('MLflow upload failed (metrics): x', '/o', null)).toMatch(
      /`reverify upload -o \/o --config \.\.\.` uploads them later$/,
    );
    expect(wandbFailure(Object.assign(new Error('dial http://u:pw@h/x: refused'), { step: 'opening the run' }))).toBe(
      'W&B upload failed (opening the run): dial http://***@h/x: refused',
    );
    expect(wandbUploadedLine({ project: 'p', runId: 'r1', runDir: '/d/offline-run-1', offline: true, rows: 4, metrics: 9 })).toBe(
      'Uploaded to W&B: project p, run r1 (4 rollouts in the Rollouts table, 9 metrics); offline: `wandb sync /d/offline-run-1` uploads it',
    );
  });
});
