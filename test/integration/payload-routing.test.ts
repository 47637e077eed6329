/**
 * NeMo Gym 0.7.0's payloads and routing end to end (`reverify run` in-process, the shared Temporal
 * dev server, three reference resources servers): materialized task rows (`task_input`) are
 * lifted into the `/verify` body, `deliverables_dir`/`reference_ids` are carried from the rollout,
 * rows are routed by `task_source`, then `_ng_environment_server`, then the agent; the stamps land
 * on main and sidecar rows; aggregation groups by (run, resources server) with 0.7.0's labels.
 * And `--judge-failed-only` refuses multi-stage rows before anything is written.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../src/reference-server/server.js';
import { runReverify, type RunOutcome } from '../helpers/run-fixtures.js';
import { failureLine, lines, responseText, rows, successLine, tasks, writeFixture, writeLines } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('payload-routing');

const agentRef = '{"type":"responses_api_agents","name":"agent_a"}';
const rcp = (t: number) => `{"input":[{"role":"user","content":"Question ${t}? Answer A or B."}],"temperature":1.0}`;

/** A flat materialized inputs row of agent_a with extra top-level fields (raw JSON members). */
const flatInput = (t: number, extra = '') =>
  `{"responses_create_params":${rcp(t)},"expected_answer":"A","options":[{"A":"yes"},{"B":"no"}],"agent_ref":${agentRef}${extra},` +
  `"_ng_task_index":${t},"_ng_rollout_index":0}`;

/** A 0.7.0 materialized task row (task_id + task_input with the historical task_data), stamped with env_b, naming no agent. */
const taskInput = (t: number) =>
  `{"task_id":{"taskset":"mcqa","task_id":"${t}"},"task_input":{"responses_create_params":${rcp(t)},` +
  `"task_data":{"expected_answer":"A","options":[{"A":"yes"},{"B":"no"}]}},"_ng_task_index":${t},"_ng_rollout_index":0,` +
  `"_ng_environment_server":"env_b"}`;

/** A rollout row as 0.7.0's collection writes it (the environment server that ran it stamped), with extra members. */
const rollout = (t: number, env: string, extra = '') =>
  `{"responses_create_params":${rcp(t)},"response":${responseText(t)},"reward":1.0${extra},"_ng_task_index":${t},"_ng_rollout_index":0,` +
  `"_ng_environment_server":"${env}"}`;

function writeConfig(dir: string, urls: Record<'rs_a' | 'rs_b' | 'rs_j', string>): string {
  const rs = (name: string, url: string) => {
    const u = new URL(url);
    return [`${name}:`, '  resources_servers:', '    mcqa:', `      host: ${u.hostname}`, `      port: ${u.port}`];
  };
  const env = (name: string, target: string) => [
    `${name}:`,
    '  environment_servers:',
    '    legacy_agent_env:',
    '      host: 127.0.0.1',
    '      port: 9',
    '      resources_server:',
    '        type: resources_servers',
    `        name: ${target}`,
  ];
  const agent = [
    'agent_a:',
    '  responses_api_agents:',
    '    simple_agent:',
    '      resources_server:',
    '        type: resources_servers',
    '        name: rs_a',
  ];
  const path = join(dir, 'gym.yaml');
  writeFileSync(
    path,
    [
      ...agent,
      ...env('env_b', 'rs_b'),
      ...env('env_j', 'rs_j'),
      ...rs('rs_a', urls.rs_a),
      ...rs('rs_b', urls.rs_b),
      ...rs('rs_j', urls.rs_j),
    ].join('\n') + '\n',
  );
  return path;
}

describe('payloads, routing, stamps and grouping as NeMo Gym 0.7.0', () => {
  let rsA: ReferenceServer;
  let rsB: ReferenceServer;
  let rsJ: ReferenceServer;
  let dir: string;
  let outcome: RunOutcome;
  const byKey = new Map<number, string>();

  beforeAll(async () => {
    rsA = await startReferenceServer();
    // Two servers answer with indented JSON: their rows are written on one line all the same.
    rsB = await startReferenceServer({ pretty: true });
    rsJ = await startReferenceServer({ judgeFailRate: 1, pretty: true }); // every row it verifies goes to the sidecar
    dir = tempDir();
    const inputs = join(dir, 'inputs.jsonl');
    const rollouts = join(dir, 'rollouts.jsonl');
    writeLines(inputs, [
      flatInput(0), // agent_a -> rs_a
      flatInput(1, ',"_ng_environment_server":"env_b"'), // the stamp wins over the agent -> rs_b
      flatInput(2, ',"task_source":"rs_a","_ng_environment_server":"env_b"'), // task_source wins over the stamp -> rs_a
      taskInput(3), // lifted task fields, routed by env_b -> rs_b
      flatInput(4), // carried deliverables_dir / reference_ids -> rs_a
      flatInput(5, ',"_ng_environment_server":"env_j"'), // -> rs_j, judge-failed: the sidecar
    ]);
    writeLines(rollouts, [
      rollout(5, 'env_j'),
      rollout(4, 'agent_a_env', ',"deliverables_dir":"/runs/4/out","reference_ids":[4,7]'),
      rollout(3, 'env_b'),
      rollout(2, 'env_b'),
      rollout(1, 'env_b'),
      rollout(0, 'agent_a_env'),
    ]);
    const config = writeConfig(dir, { rs_a: rsA.url, rs_b: rsB.url, rs_j: rsJ.url });
    outcome = await runReverify({ inputs, rollouts, output: join(dir, 'out.jsonl'), configs: [config] });
    for (const line of [...lines(join(dir, 'out.jsonl')), ...lines(join(dir, 'out_failures.jsonl'))]) {
      byKey.set((JSON.parse(line) as { _ng_task_index: number })._ng_task_index, line);
    }
  });
  afterAll(async () => {
    await Promise.all([rsA, rsB, rsJ].map((s) => s?.close()));
  });

  it('the run succeeds; each /verify goes to the server of task_source, else the environment server, else the agent', () => {
    expect(outcome.error).toBeNull();
    expect(rsA.stats().requests.verify).toBe(3); // rows 0, 2, 4
    expect(rsB.stats().requests.verify).toBe(2); // rows 1, 3
    expect(rsJ.stats().requests.verify).toBe(1); // row 5
    expect(rows(join(dir, 'out.jsonl')).map((r) => r._ng_task_index)).toEqual(expect.arrayContaining([0, 1, 2, 3, 4]));
    expect(rows(join(dir, 'out_failures.jsonl')).map((r) => r._ng_task_index)).toEqual([5]);
  });

  it('rows from servers answering indented JSON are one line each, their members as the server wrote them', () => {
    expect(readFileSync(join(dir, 'out.jsonl'), 'utf8').split('\n')).toHaveLength(6); // 5 rows, then the last line break
    expect(readFileSync(join(dir, 'out_failures.jsonl'), 'utf8').split('\n')).toHaveLength(2);
    expect(byKey.get(1)!).toMatch(/^\{"responses_create_params":\{"input":\[\{"role":"user",/);
    expect(byKey.get(1)!).not.toMatch(/\s"|": /);
  });

  it('a materialized task row is verified with its task fields lifted (graded against task_data.expected_answer)', () => {
    const row = JSON.parse(byKey.get(3)!) as Record<string, unknown>;
    expect(row).toMatchObject({ reward: 1.0, expected_answer: 'A', extracted_answer: 'A', responses_create_params: JSON.parse(rcp(3)) });
    // Stamped from the body: no agent_ref (the row names none), the environment server.
    expect(byKey.get(3)!.endsWith(',"_ng_task_index":3,"_ng_rollout_index":0,"_ng_environment_server":"env_b"}')).toBe(true);
    expect(row).not.toHaveProperty('agent_ref');
  });

  it('stamps in 0.7.0 order on main rows: agent_ref, _ng_environment_server, task_source', () => {
    expect(byKey.get(0)!.endsWith(`,"_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":${agentRef}}`)).toBe(true);
    expect(
      byKey.get(1)!.endsWith(`,"_ng_task_index":1,"_ng_rollout_index":0,"agent_ref":${agentRef},"_ng_environment_server":"env_b"}`),
    ).toBe(true);
    expect(
      byKey
        .get(2)!
        .endsWith(
          `,"_ng_task_index":2,"_ng_rollout_index":0,"agent_ref":${agentRef},"_ng_environment_server":"env_b","task_source":"rs_a"}`,
        ),
    ).toBe(true);
  });

  it('and on sidecar rows', () => {
    const side = JSON.parse(byKey.get(5)!) as Record<string, unknown>;
    expect(side).toMatchObject({ _ng_failure_class: 'judge_failed', _ng_environment_server: 'env_j', agent_ref: JSON.parse(agentRef) });
  });

  it('deliverables_dir and reference_ids reach the verifier from the rollout (the reference server echoes them)', () => {
    expect(JSON.parse(byKey.get(4)!)).toMatchObject({ deliverables_dir: '/runs/4/out', reference_ids: [4, 7], reward: 1.0 });
    expect(JSON.parse(byKey.get(0)!)).not.toHaveProperty('deliverables_dir');
  });

  it('aggregation groups by (run, resources server); agent_a ran in two runs, so env_b is named by its key', () => {
    expect(rsA.stats().requests.aggregate_metrics).toBe(2); // (agent_a, rs_a) and (env_b, rs_a)
    expect(rsB.stats().requests.aggregate_metrics).toBe(1); // (env_b, rs_b)
    expect(rsJ.stats().requests.aggregate_metrics).toBe(0);
    const metrics = JSON.parse(readFileSync(join(dir, 'out_aggregate_metrics.json'), 'utf8')) as Array<{
      agent_ref: { name: string };
      group_level_metrics: Array<{ _ng_task_index: number }>;
    }>;
    const groups = metrics.map((m) => `${m.agent_ref.name}:${m.group_level_metrics.map((g) => g._ng_task_index).join(',')}`).sort();
    expect(groups).toEqual(['agent_a:0,4', 'env_b:1,3', 'env_b:2']);
  });
});

describe('--judge-failed-only refuses multi-stage rows (NeMo Gym 0.7.0)', () => {
  it('a stage_index anywhere in the recovery sidecar: one line naming file:line, exit 1, nothing written', async () => {
    const rs = await startReferenceServer();
    try {
      const dir = tempDir();
      const f = writeFixture(dir, {
        inputs: tasks([0, 1, 2]),
        successes: [successLine({ t: 0 })],
        failures: [
          failureLine({ t: 1 }),
          failureLine({ t: 2 }, 'timeout_exceeded').replace('"reward":0.0', '"reward":0.0,"stage_index":1'),
        ],
      });
      const output = join(dir, 'recovered', 'out.jsonl');
      const outcome = await runReverify({
        inputs: f.inputs,
        rollouts: f.rollouts,
        output,
        servers: [`rs=${rs.url}`],
        judgeFailedOnly: true,
      });
      expect(outcome.error).toEqual({
        line:
          `Error: ${f.rolloutsSidecar}:2: --judge-failed-only does not support multi-stage rows; resume the multi-stage rollout ` +
          'collection so stage identity and adaptive references are preserved',
        code: 1,
      });
      expect(existsSync(join(dir, 'recovered'))).toBe(false);
      expect(rs.stats().requests.verify).toBe(0);
      expect(outcome.lines.some((l) => l.startsWith('Recovery mode: seeded'))).toBe(false);
      // The same files without the stage_index recover as usual.
      writeLines(f.rolloutsSidecar, [failureLine({ t: 1 }), failureLine({ t: 2 }, 'timeout_exceeded')]);
      const ok = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output, servers: [`rs=${rs.url}`], judgeFailedOnly: true });
      expect(ok.error).toBeNull();
      expect(rows(output).map((r) => r._ng_task_index)).toEqual([0, 1]);
    } finally {
      await rs.close();
    }
  });

  it('with --retry-invalid-judge-responses, also a flagged row of --rollouts (it would be moved and recovered); other rows of it are exempt', async () => {
    const rs = await startReferenceServer();
    try {
      const dir = tempDir();
      const staged = (line: string) => line.replace('"reward":', '"stage_index":0,"reward":');
      const f = writeFixture(dir, {
        inputs: tasks([0, 1, 2]),
        successes: [
          staged(successLine({ t: 0 })),
          staged(successLine({ t: 2 }).replace('"reward":', '"invalid_judge_response":true,"reward":')),
        ],
        failures: [failureLine({ t: 1 })],
      });
      const output = join(dir, 'recovered', 'out.jsonl');
      const base = { inputs: f.inputs, rollouts: f.rollouts, output, servers: [`rs=${rs.url}`], judgeFailedOnly: true };
      const refused = await runReverify({ ...base, retryInvalidJudgeResponses: true });
      expect(refused.error?.code).toBe(1);
      expect(refused.error?.line.startsWith(`Error: ${f.rollouts}:2: --judge-failed-only does not support multi-stage rows`)).toBe(true);
      expect(existsSync(join(dir, 'recovered'))).toBe(false);
      // Without the flag the successes of --rollouts are only copied: their stage_index does not matter.
      expect((await runReverify(base)).error).toBeNull();
    } finally {
      await rs.close();
    }
  });
});
