/**
 * Spec §6 (nemo-gym-contract.md), the checks that need a whole run: dispatch (72–81), output path
 * preparation (84–87), reload (90–91), the aggregation call (92–95), the reverify-mode check and
 * guard (98–104), the end-to-end run (105–110) and force/prefix (111–113). Resume is in
 * spec-checklist-resume.test.ts, judge-failed-only recovery in spec-checklist-recovery.test.ts.
 *
 * Each test runs `reverify run` in-process against the shared real Temporal dev server and real
 * scripted resources servers (test/helpers/scripted-server.ts), which record what they receive.
 * NeMo Gym "returns" the sorted rows; we return counts, so "the return value is sorted" is checked
 * on what the resources server receives on /aggregate_metrics (the same sorted reload, §4.11).
 */
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { guardWarning } from '../../src/contract/messages.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runReverify } from '../helpers/run-fixtures.js';
import {
  byTask,
  echo,
  judgeFailed,
  keyText,
  reward,
  startScriptedServer,
  type Row,
  type ScriptedServer,
} from '../helpers/scripted-server.js';
import {
  agentRef,
  inputLine,
  keys,
  lines,
  payload,
  responseText,
  rows,
  successLine,
  tasks,
  writeAgentsConfig,
  writeFixture,
  writeLines,
  writeResourcesOnlyConfig,
} from '../helpers/spec-fixtures.js';
import { aggregatedKeys, plain, sentKeys } from '../helpers/spec-run.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('spec-checklist');

const server = closedAfterEach(startScriptedServer);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A reply that waits until `n` /verify requests are in flight (at most `maxMs`), so a peak shows. */
function barrier(get: () => ScriptedServer, n: number, maxMs = 3000) {
  return async () => {
    const start = Date.now();
    while (get().inFlight < n && Date.now() - start < maxMs) await sleep(5);
    await sleep(30);
    return reward(1.0);
  };
}

describe('§6 dispatch (72–81)', () => {
  it('§6.72 given 3 payloads and a 200 {"reward":0.5}, each yields (payload, that JSON): /verify receives input ∪ {response}; each output row is that JSON, stamped', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
    const { result, error } = await plain(f, rs);
    expect(error).toBeNull();
    const sent = [...rs.verifyBodies].sort((a, b) => (a._ng_task_index as number) - (b._ng_task_index as number));
    expect(sent).toEqual([0, 1, 2].map((t) => payload(t)));
    const out = rows(f.output).sort((a, b) => (a._ng_task_index as number) - (b._ng_task_index as number));
    expect(out).toEqual([0, 1, 2].map((t) => ({ reward: 0.5, _ng_task_index: t, _ng_rollout_index: 0, agent_ref: agentRef('agent_a') })));
    expect(rows(f.outputSidecar)).toEqual([]);
    expect(result!.done).toBe(3);
  });

  it('§6.73 rows of agent_a and agent_b mapped to rs_a and rs_b: each /verify goes to its own RS', async () => {
    const rsA = await server({ verify: () => reward(0.25) });
    const rsB = await server({ verify: () => reward(0.75) });
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: [...tasks([0, 2], 'agent_a'), ...tasks([1, 3], 'agent_b')] });
    const config = writeAgentsConfig(dir, { agent_a: { server: 'rs_a', url: rsA.url }, agent_b: { server: 'rs_b', url: rsB.url } });
    const { error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, configs: [config] });
    expect(error).toBeNull();
    expect(sentKeys(rsA)).toEqual(['0:0', '2:0']);
    expect(sentKeys(rsB)).toEqual(['1:0', '3:0']);
    for (const b of rsA.verifyBodies) expect(b.agent_ref).toEqual(agentRef('agent_a'));
    for (const b of rsB.verifyBodies) expect(b.agent_ref).toEqual(agentRef('agent_b'));
    const rewardOf = new Map(rows(f.output).map((r) => [keyText(r), r.reward]));
    expect(Object.fromEntries(rewardOf)).toEqual({ '0:0': 0.25, '2:0': 0.25, '1:0': 0.75, '3:0': 0.75 });
  });

  describe('a non-2xx /verify (ours: the run does not abort)', () => {
    let rs: ScriptedServer;
    let outcome: Awaited<ReturnType<typeof runReverify>>;
    let f: ReturnType<typeof writeFixture>;
    beforeAll(async () => {
      rs = await startScriptedServer({
        verify: byTask({
          0: reward(1.0),
          1: (_row, attempt) => (attempt === 0 ? { status: 500, body: 'Traceback: boom' } : reward(0.7)),
          2: { status: 422, body: { detail: [{ type: 'missing', loc: ['body', 'expected_answer'], msg: 'Field required' }] } },
        }),
      });
      f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
      outcome = await plain(f, rs);
      await rs.close();
    });

    it('§6.74 (ours: not propagated — a 5xx is retried and its row succeeds; a 4xx becomes a terminal verify_rejected sidecar row and is not retried; the other rows are written)', () => {
      expect(outcome.error).toBeNull();
      expect(sentKeys(rs)).toEqual(['0:0', '1:0', '1:0', '2:0']);
      expect(
        rows(f.output)
          .map((r) => [keyText(r), r.reward])
          .sort(),
      ).toEqual([
        ['0:0', 1],
        ['1:0', 0.7],
      ]);
      const side = rows(f.outputSidecar);
      expect(keys(side)).toEqual(['2:0']);
      expect(side[0]).toMatchObject({
        reward: 0,
        _ng_failure_class: 'verify_rejected',
        _ng_failure_terminal: true,
        verify_status: 422,
        _ng_task_index: 2,
        _ng_rollout_index: 0,
        agent_ref: agentRef('agent_a'),
      });
      expect(outcome.result!.rejected).toBe(1);
    });

    it('§6.75 nothing about the failed /verify is printed (ours: there is no debug switch, so this always holds)', () => {
      expect(outcome.lines.filter((l) => /\/verify failed|status=\d{3}/.test(l))).toEqual([]);
    });

    it('§6.76 (ours: no request-debug switch — instead of printing "/verify failed status=…", the rejected row records its status and body excerpt in its sidecar row)', () => {
      const [row] = rows(f.outputSidecar);
      expect(row.verify_status).toBe(422);
      expect(row.verify_error).toContain('Field required');
    });
  });

  it('§6.77 (ours: without --concurrency the bound is 32, not unbounded) 5 payloads are all in flight at once', async () => {
    let rs!: ScriptedServer;
    rs = await server({ verify: barrier(() => rs, 5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4]) });
    const { lines: printed, error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(rs.peakInFlight).toBe(5);
    expect(printed).toContain('Verifying with 32 concurrent requests');
  });

  it('§6.78 the routing table comes from the config given at start (ours: no head server — --config routes the agents, a --server URL wins over its host/port)', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: tasks([0, 1]) });
    // The config points rs_a at port 9 (nothing listens); --server gives the live address.
    const config = writeAgentsConfig(dir, { agent_a: { server: 'rs_a', url: 'http://127.0.0.1:9' } });
    const { error } = await runReverify({
      inputs: f.inputs,
      rollouts: f.rollouts,
      output: f.output,
      configs: [config],
      servers: [rs.flag('rs_a')],
    });
    expect(error).toBeNull();
    expect(rs.modeRequests).toBe(1);
    expect(sentKeys(rs)).toEqual(['0:0', '1:0']);
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0']);
  });

  it.each([200, 1])('§6.79 given concurrency 2 and 6 payloads, never more than 2 in flight (batch size %i)', async (batchSize) => {
    const rs = await server({ verify: () => ({ ...reward(1.0), delayMs: 120 }) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4, 5]) });
    const { lines: printed, error } = await plain(f, rs, { concurrency: 2, batchSize });
    expect(error).toBeNull();
    expect(rs.verifyBodies).toHaveLength(6);
    expect(rs.peakInFlight).toBeLessThanOrEqual(2);
    expect(rs.peakInFlight).toBe(2);
    expect(printed).toContain('Verifying with 2 concurrent requests');
  });

  it('§6.80 the concurrency permits are all released at the end (ours: the window slots — 8 one-row batches at concurrency 2, with a retried 5xx and a rejected 4xx among them, all complete and nothing stays in flight)', async () => {
    const rs = await server({
      verify: byTask(
        {
          2: (_row, attempt) => (attempt === 0 ? { status: 503, body: 'busy' } : { ...reward(1.0), delayMs: 40 }),
          5: { status: 400, body: { detail: 'bad' } },
        },
        { ...reward(1.0), delayMs: 40 },
      ),
    });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4, 5, 6, 7]) });
    const { result, error } = await plain(f, rs, { concurrency: 2, batchSize: 1 });
    expect(error).toBeNull();
    expect(result!.done + result!.failed).toBe(8);
    expect([...keys(rows(f.output)), ...keys(rows(f.outputSidecar))].sort()).toEqual(
      tasks([0, 1, 2, 3, 4, 5, 6, 7]).map((r) => `${r.t}:0`),
    );
    expect(rs.peakInFlight).toBeLessThanOrEqual(2);
    expect(rs.inFlight).toBe(0);
  });

  it('§6.81 given a nested non-existent directory, parents are created and the output path is a writable file, not a directory', async () => {
    const rs = await server();
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: tasks([0, 1]) });
    const output = join(dir, 'a', 'b', 'c', 'out.jsonl');
    const { result, error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output, servers: [rs.flag('rs')] });
    expect(error).toBeNull();
    expect(statSync(output).isFile()).toBe(true);
    expect(statSync(join(dir, 'a', 'b', 'c', 'out_failures.jsonl')).isFile()).toBe(true);
    expect(keys(rows(output)).sort()).toEqual(['0:0', '1:0']);
    expect(result!.outputs.output).toBe(output);
  });
});

describe('§6 output path preparation (84–87)', () => {
  it('§6.84 given an existing output, no overwrite, no resume: ConfigError "already exists", the file is untouched, nothing is sent', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeFileSync(f.output, 'old bytes\n');
    const { error } = await plain(f, rs);
    expect(error).toEqual({
      line: `Error: Output file already exists: '${f.output}'. Pass --overwrite to delete it and start fresh, or --resume to continue from it.`,
      code: 1,
    });
    expect(readFileSync(f.output, 'utf8')).toBe('old bytes\n');
    expect(existsSync(f.outputSidecar)).toBe(false);
    expect(rs.verifyBodies).toHaveLength(0);
  });

  it('§6.86 given an existing output and sidecar with overwrite, both are deleted and "Deleted existing output file" is printed for each', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeLines(f.output, [successLine({ t: 7 })]);
    writeLines(f.outputSidecar, [judgeFailedRow(8)]);
    const { lines: printed, error } = await plain(f, rs, { overwrite: true });
    expect(error).toBeNull();
    expect(printed).toContain(`Deleted existing output file: '${f.output}'`);
    expect(printed).toContain(`Deleted existing output file: '${f.outputSidecar}'`);
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0']);
    expect(rows(f.outputSidecar)).toEqual([]);
  });

  it('§6.87 given no existing files, no error without overwrite (and nothing is reported deleted)', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0]) });
    const { lines: printed, error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(printed.filter((l) => l.startsWith('Deleted existing output file'))).toEqual([]);
    expect(existsSync(f.output)).toBe(true);
    expect(existsSync(f.outputSidecar)).toBe(true);
  });
});

/** A judge-failure sidecar row of key (t, 0), as an earlier run wrote it. */
function judgeFailedRow(t: number): string {
  return `{"reward":0.0,"_ng_failure_class":"judge_failed","_ng_failure_judge_error":"JudgeError: x","_ng_task_index":${t},"_ng_rollout_index":0,"agent_ref":{"name":"agent_a"}}`;
}

/** The /aggregate_metrics entry of a collection success row (`successLine`): no rcp, response = {usage}. */
function strippedSuccess(t: number, r = 0, agent = 'agent_a'): Row {
  const full = JSON.parse(successLine({ t, r, agent })) as Row;
  const { responses_create_params: _rcp, response, ...rest } = full;
  return { ...rest, response: { usage: (response as Row).usage } };
}

describe('§6 reload (90–91)', () => {
  it("§6.90 output rows (agent_a T=1), (agent_b T=0), (agent_a T=0 R=1) are read back whole and sorted by key; each agent's rows go to its RS (one call per agent, so the order shows within an agent)", async () => {
    const rsA = await server();
    const rsB = await server();
    const dir = tempDir();
    const specs = [
      { t: 1, r: 0, agent: 'agent_a' },
      { t: 0, r: 0, agent: 'agent_b' },
      { t: 0, r: 1, agent: 'agent_a' },
    ];
    const f = writeFixture(dir, { inputs: specs });
    const config = writeAgentsConfig(dir, { agent_a: { server: 'rs_a', url: rsA.url }, agent_b: { server: 'rs_b', url: rsB.url } });
    writeLines(
      f.output,
      specs.map((s) => successLine(s)),
    );
    const { lines: printed, error } = await runReverify({
      inputs: f.inputs,
      rollouts: f.rollouts,
      output: f.output,
      configs: [config],
      resume: true,
    });
    expect(error).toBeNull();
    expect(printed).toContain('WARNING: Nothing to be re-verified.');
    expect(rsA.verifyBodies.length + rsB.verifyBodies.length).toBe(0);
    expect(rsA.aggregateBodies.map((b) => b.verify_responses)).toEqual([
      [strippedSuccess(0, 1, 'agent_a'), strippedSuccess(1, 0, 'agent_a')],
    ]);
    expect(rsB.aggregateBodies.map((b) => b.verify_responses)).toEqual([[strippedSuccess(0, 0, 'agent_b')]]);
  });

  it('§6.91 an empty output reloads as no rows (no /aggregate_metrics call, no metrics file); a row plus a blank line reloads as one row', async () => {
    const rs = await server();
    // Empty: every key has a terminal sidecar row, so a resume sends nothing and the output stays empty.
    const a = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    writeFileSync(a.output, '');
    writeLines(
      a.outputSidecar,
      [0, 1].map(
        (t) =>
          `{"reward":0.0,"_ng_failure_class":"timeout_exceeded","_ng_failure_terminal":true,"_ng_task_index":${t},"_ng_rollout_index":0,"agent_ref":{"name":"agent_a"}}`,
      ),
    );
    const empty = await runReverify({ inputs: a.inputs, rollouts: a.rollouts, output: a.output, servers: [rs.flag('rs')], resume: true });
    expect(empty.error).toBeNull();
    expect(rs.verifyBodies).toHaveLength(0);
    expect(rs.aggregateBodies).toHaveLength(0);
    expect(existsSync(a.metrics)).toBe(false);
    expect(empty.result!.metricsPath).toBeNull();

    // One row and a blank line.
    const b = writeFixture(tempDir(), { inputs: tasks([0]) });
    writeFileSync(b.output, successLine({ t: 0 }) + '\n\n');
    const one = await runReverify({ inputs: b.inputs, rollouts: b.rollouts, output: b.output, servers: [rs.flag('rs')], resume: true });
    expect(one.error).toBeNull();
    expect(rs.verifyBodies).toHaveLength(0);
    expect(aggregatedKeys(rs)).toEqual([['0:0']]);
  });
});

describe('§6 aggregation call (92–95)', () => {
  it('§6.92 agent_a rows (T=0,1) and an agent_b row (T=2) mapped to rs_a/rs_b: exactly two calls, rs_a gets T=0,1 only and rs_b gets T=2 only', async () => {
    const rsA = await server();
    const rsB = await server();
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: [...tasks([0, 1], 'agent_a'), ...tasks([2], 'agent_b')] });
    const config = writeAgentsConfig(dir, { agent_a: { server: 'rs_a', url: rsA.url }, agent_b: { server: 'rs_b', url: rsB.url } });
    const { error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, configs: [config] });
    expect(error).toBeNull();
    expect(aggregatedKeys(rsA)).toEqual([['0:0', '1:0']]);
    expect(aggregatedKeys(rsB)).toEqual([['2:0']]);
    const metrics = JSON.parse(readFileSync(f.metrics, 'utf8')) as Array<{ agent_ref: unknown }>;
    expect(metrics.map((m) => m.agent_ref).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))).toEqual([
      { name: 'agent_a' },
      { name: 'agent_b' },
    ]);
  });

  it('§6.93 the sent entry has no responses_create_params, response = {usage} only (no response when it has no usage), other fields kept; <out>_aggregate_metrics.json is written next to the output and its path returned', async () => {
    const rs = await server({
      verify: (row) =>
        row._ng_task_index === 0
          ? echo(row, { reward: 1.0, judgement: 'ok', extracted_answer: 'A' })
          : echo({ ...row, response: { id: 'resp_1', object: 'response', output: [] } }, { reward: 0.0, judgement: 'no' }),
      aggregate: () => ({
        status: 200,
        body: { agent_metrics: { 'mean/reward': 0.5 }, key_metrics: { 'mean/reward': 0.5 }, group_level_metrics: [{ _ng_task_index: 0 }] },
      }),
    });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const { result, lines: printed, error } = await plain(f, rs);
    expect(error).toBeNull();
    // The output rows themselves keep what the RS echoed.
    expect(rows(f.output).every((r) => 'responses_create_params' in r && 'response' in r)).toBe(true);
    expect(rs.aggregateBodies).toHaveLength(1);
    expect(rs.aggregateBodies[0].verify_responses).toEqual([
      {
        reward: 1,
        judgement: 'ok',
        extracted_answer: 'A',
        _ng_task_index: 0,
        _ng_rollout_index: 0,
        agent_ref: agentRef('agent_a'),
        response: { usage: JSON.parse(responseText(0)).usage },
      },
      { reward: 0, judgement: 'no', _ng_task_index: 1, _ng_rollout_index: 0, agent_ref: agentRef('agent_a') },
    ]);
    expect(result!.metricsPath).toBe(f.metrics);
    expect(readdirSync(f.dir)).toContain('out_aggregate_metrics.json');
    expect(JSON.parse(readFileSync(f.metrics, 'utf8'))).toEqual([
      {
        agent_ref: { name: 'agent_a' },
        agent_metrics: { 'mean/reward': 0.5 },
        key_metrics: { 'mean/reward': 0.5 },
        group_level_metrics: [{ _ng_task_index: 0 }],
        repeat_level_metrics: [], // omitted by the server
      },
    ]);
    expect(printed).toContain(`Aggregate metrics: ${f.metrics}`);
  });

  it('§6.94 given no results (every row judge-failed), no call, no file, none returned', async () => {
    const rs = await server({ verify: () => judgeFailed() });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const { result, lines: printed, error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(rows(f.output)).toEqual([]);
    expect(keys(rows(f.outputSidecar)).sort()).toEqual(['0:0', '1:0']);
    expect(rs.aggregateBodies).toHaveLength(0);
    expect(existsSync(f.metrics)).toBe(false);
    expect(result!.metricsPath).toBeNull();
    expect(printed).toContain('Aggregate metrics: None');
  });

  it("§6.95 a row whose agent_ref has no name is excluded, and only the named agent's RS is called", async () => {
    const rsA = await server();
    const rsB = await server();
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: tasks([0], 'agent_a') });
    const config = writeAgentsConfig(dir, { agent_a: { server: 'rs_a', url: rsA.url }, agent_b: { server: 'rs_b', url: rsB.url } });
    writeLines(f.output, [successLine({ t: 0 }), '{"reward":1.0,"_ng_task_index":9,"_ng_rollout_index":0,"agent_ref":{}}']);
    const { error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, configs: [config], resume: true });
    expect(error).toBeNull();
    expect(aggregatedKeys(rsA)).toEqual([['0:0']]);
    expect(rsB.aggregateBodies).toHaveLength(0);
  });
});

describe('§6 reverify-mode check and guard (98–104)', () => {
  it('§6.98 two agents sharing an RS: exactly one GET /reverify_mode', async () => {
    const rs = await server();
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: [...tasks([0], 'agent_a'), ...tasks([1], 'agent_b')] });
    const config = writeAgentsConfig(dir, { agent_a: { server: 'shared_rs', url: rs.url }, agent_b: { server: 'shared_rs', url: rs.url } });
    const { error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, configs: [config] });
    expect(error).toBeNull();
    expect(rs.modeRequests).toBe(1);
    expect(sentKeys(rs)).toEqual(['0:0', '1:0']);
  });

  it('§6.99 a real resources-only config whose RS reports unknown: that RS is an offender (the run is refused naming it; nothing sent or written)', async () => {
    const rs = await server({ mode: 'unknown' });
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: tasks([0]) });
    const config = writeResourcesOnlyConfig(dir, 'verifier_block', rs.url);
    const { error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, configs: [config] });
    expect(error).toEqual({
      line:
        "Error: Resource server(s) ['verifier_block'] have reverify_mode=UNSUPPORTED or UNKNOWN. Rewards computed by reverification may be incorrect. " +
        "Pass ++force=true to override (output will be prefixed with 'unsafe_'). With reverify, pass --force.",
      code: 1,
    });
    expect(rs.modeRequests).toBe(1);
    expect(rs.verifyBodies).toHaveLength(0);
    expect(existsSync(f.output)).toBe(false);
  });

  it('§6.101 no offenders: the guard passes with no warning and no prefix', async () => {
    const rs = await server();
    const f = writeFixture(tempDir(), { inputs: tasks([0]) });
    const { result, lines: printed, error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(printed.filter((l) => l.includes('reverify_mode'))).toEqual([]);
    expect(result!.forceWarning).toBeNull();
    expect(result!.outputs.output).toBe(f.output);
  });

  it('§6.102 offenders and no force: ConfigError naming the offending RS only (sorted list), nothing sent or written', async () => {
    const rsA = await server();
    const rsB = await server({ mode: 'unsupported' });
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: [...tasks([0], 'agent_a'), ...tasks([1], 'agent_b')] });
    const config = writeAgentsConfig(dir, { agent_a: { server: 'rs_a', url: rsA.url }, agent_b: { server: 'rs_b', url: rsB.url } });
    const { error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, configs: [config] });
    expect(error?.code).toBe(1);
    expect(error?.line).toBe(
      "Error: Resource server(s) ['rs_b'] have reverify_mode=UNSUPPORTED or UNKNOWN. Rewards computed by reverification may be incorrect. " +
        "Pass ++force=true to override (output will be prefixed with 'unsafe_'). With reverify, pass --force.",
    );
    expect(rsA.verifyBodies.length + rsB.verifyBodies.length).toBe(0);
    expect(readdirSync(dir).filter((n) => n.startsWith('out') || n.startsWith('.out'))).toEqual([]);
  });

  it('§6.104 a table {a→rs_a, b→rs_b}: both RS are checked although only agent_a has rows (an unknown rs_b refuses the run)', async () => {
    const rsA = await server();
    const rsB = await server();
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: tasks([0, 1], 'agent_a') });
    const config = writeAgentsConfig(dir, { agent_a: { server: 'rs_a', url: rsA.url }, agent_b: { server: 'rs_b', url: rsB.url } });
    const ok = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, configs: [config] });
    expect(ok.error).toBeNull();
    expect(rsA.modeRequests).toBe(1);
    expect(rsB.modeRequests).toBe(1);
    expect(rsB.verifyBodies).toHaveLength(0);

    const rsUnknown = await server({ mode: 'unknown' });
    const config2 = writeAgentsConfig(
      dir,
      { agent_a: { server: 'rs_a', url: rsA.url }, agent_b: { server: 'rs_b', url: rsUnknown.url } },
      'gym2.yaml',
    );
    const refused = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: join(dir, 'other.jsonl'), configs: [config2] });
    expect(refused.error?.line).toContain("Resource server(s) ['rs_b'] have reverify_mode=UNSUPPORTED or UNKNOWN");
    expect(rsUnknown.modeRequests).toBe(1);
  });
});

describe('§6 end-to-end run (105–110)', () => {
  it('§6.105 success (with skills_ref), failure (class "timeout") and no-persist results: main = 1 row of exactly {reward, T, R, agent_ref, skills_ref}; sidecar = 1 row of exactly {reward, _ng_failure_class, T, R, agent_ref}; the no-persist row is nowhere; only the success counts as done', async () => {
    const rs = await server({
      verify: byTask({
        0: reward(1.0),
        1: reward(0.0, { _ng_failure_class: 'timeout' }),
        2: reward(0.0, { _ng_failure_class: 'kill_shaped', _ng_no_persist: true }),
      }),
    });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]), skills: (r) => r.t === 0 });
    const { result, error } = await plain(f, rs);
    expect(error).toBeNull();
    const main = rows(f.output);
    expect(main).toHaveLength(1);
    expect(Object.keys(main[0]).sort()).toEqual(['_ng_rollout_index', '_ng_task_index', 'agent_ref', 'reward', 'skills_ref']);
    expect(main[0]).toEqual({
      reward: 1,
      _ng_task_index: 0,
      _ng_rollout_index: 0,
      agent_ref: agentRef('agent_a'),
      skills_ref: JSON.parse(inputLine({ t: 0 }, { skills: true })).skills_ref,
    });
    const side = rows(f.outputSidecar);
    expect(side).toHaveLength(1);
    expect(Object.keys(side[0]).sort()).toEqual(['_ng_failure_class', '_ng_rollout_index', '_ng_task_index', 'agent_ref', 'reward']);
    expect(side[0]).toMatchObject({ _ng_failure_class: 'timeout', _ng_task_index: 1 });
    const everywhere = readFileSync(f.output, 'utf8') + readFileSync(f.outputSidecar, 'utf8');
    expect(everywhere).not.toContain('"_ng_task_index":2');
    expect(result).toMatchObject({ done: 1, failed: 1, dropped: 1 });
    expect(aggregatedKeys(rs)).toEqual([['0:0']]);
  });

  it('§6.106 results completing in order T=2,1,0: the file holds 3 rows in arrival order, the aggregation input is sorted T=0,1,2', async () => {
    const rs = await server({
      verify: byTask({ 0: { ...reward(0.0), delayMs: 900 }, 1: { ...reward(0.5), delayMs: 450 }, 2: reward(1.0) }),
    });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2]) });
    const { error } = await plain(f, rs, { concurrency: 3 });
    expect(error).toBeNull();
    expect(keys(rows(f.output))).toEqual(['2:0', '1:0', '0:0']);
    expect(aggregatedKeys(rs)).toEqual([['0:0', '1:0', '2:0']]);
  });

  it('§6.107 given concurrency 3, a 3-permit limiter is used: 9 payloads, at most and at peak exactly 3 in flight', async () => {
    let rs!: ScriptedServer;
    rs = await server({ verify: barrier(() => rs, 3, 1000) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1, 2, 3, 4, 5, 6, 7, 8]) });
    const { lines: printed, error } = await plain(f, rs, { concurrency: 3 });
    expect(error).toBeNull();
    expect(rs.verifyBodies).toHaveLength(9);
    expect(rs.peakInFlight).toBe(3);
    expect(printed).toContain('Verifying with 3 concurrent requests');
  });

  it('§6.108 (ours: without --concurrency there is still a limiter, of 32 — NeMo Gym has none): 40 payloads, at most and at peak exactly 32 in flight', async () => {
    let rs!: ScriptedServer;
    rs = await server({ verify: barrier(() => rs, 32, 3000) });
    const f = writeFixture(tempDir(), { inputs: tasks(Array.from({ length: 40 }, (_, i) => i)) });
    const { lines: printed, error } = await plain(f, rs);
    expect(error).toBeNull();
    expect(rs.verifyBodies).toHaveLength(40);
    expect(rs.peakInFlight).toBe(32);
    expect(printed).toContain('Verifying with 32 concurrent requests');
  });

  it('§6.109 disable_aggregation: no /aggregate_metrics call and no metrics file; the output is still written and its rows counted', async () => {
    const rs = await server({ verify: () => reward(0.5) });
    const f = writeFixture(tempDir(), { inputs: tasks([0, 1]) });
    const { result, lines: printed, error } = await plain(f, rs, { disableAggregation: true });
    expect(error).toBeNull();
    expect(rs.aggregateBodies).toHaveLength(0);
    expect(existsSync(f.metrics)).toBe(false);
    expect(keys(rows(f.output)).sort()).toEqual(['0:0', '1:0']);
    expect(result).toMatchObject({ done: 2, metricsPath: null });
    expect(printed.some((l) => l.startsWith('Skipping aggregate-metrics computation because disable_aggregation=True.'))).toBe(true);
  });

  it("§6.110 agents a,b → rs_a,rs_b with 2 rows each: 4 /verify calls (2 per RS, each with its own agent's rows), 4 output rows of exactly {reward, T, R, agent_ref}, aggregation sees both agents, sorted", async () => {
    const rsA = await server({ verify: () => reward(0.5) });
    const rsB = await server({ verify: () => reward(0.5) });
    const dir = tempDir();
    const specs = [...tasks([3, 1], 'agent_b'), ...tasks([2, 0], 'agent_a')];
    const f = writeFixture(dir, { inputs: specs });
    const config = writeAgentsConfig(dir, { agent_a: { server: 'rs_a', url: rsA.url }, agent_b: { server: 'rs_b', url: rsB.url } });
    const { result, error } = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, configs: [config] });
    expect(error).toBeNull();
    expect(rsA.verifyBodies).toEqual(expect.arrayContaining([payload(0), payload(2)]));
    expect(rsA.verifyBodies).toHaveLength(2);
    expect(rsB.verifyBodies).toEqual(expect.arrayContaining([payload(1, 'agent_b'), payload(3, 'agent_b')]));
    expect(rsB.verifyBodies).toHaveLength(2);
    const out = rows(f.output);
    expect(out).toHaveLength(4);
    for (const r of out) expect(Object.keys(r).sort()).toEqual(['_ng_rollout_index', '_ng_task_index', 'agent_ref', 'reward']);
    expect(aggregatedKeys(rsA)).toEqual([['0:0', '2:0']]);
    expect(aggregatedKeys(rsB)).toEqual([['1:0', '3:0']]);
    expect(result!.keyMetrics.map((k) => k.agent).sort()).toEqual(['agent_a', 'agent_b']);
  });
});

describe('§6 force / prefix (111–113)', () => {
  it('§6.111 the guard passes cleanly (even with --force): output.jsonl is written and no unsafe_output.jsonl', async () => {
    const rs = await server();
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: tasks([0]), outputName: 'output' });
    const { error } = await plain(f, rs, { force: true });
    expect(error).toBeNull();
    expect(existsSync(join(dir, 'output.jsonl'))).toBe(true);
    expect(readdirSync(dir).filter((n) => n.startsWith('unsafe_'))).toEqual([]);
  });

  describe('the guard returns a warning (--force with an unknown RS)', () => {
    let outcome: Awaited<ReturnType<typeof runReverify>>;
    let dir: string;
    beforeAll(async () => {
      const rs = await startScriptedServer({ mode: 'unknown' });
      dir = tempDir();
      const f = writeFixture(dir, { inputs: tasks([0, 1]), outputName: 'output' });
      outcome = await runReverify({ inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [rs.flag('rs_u')], force: true });
      await rs.close();
    });
    const warning = guardWarning(['rs_u']);

    it('§6.103 offenders and force: a warning containing "WARNING", the RS name and "unsafe_"', () => {
      expect(outcome.error).toBeNull();
      expect(warning).toContain('WARNING');
      expect(warning).toContain("'rs_u'");
      expect(warning).toContain('unsafe_');
      expect(outcome.result!.forceWarning).toBe(warning);
    });

    it('§6.112 unsafe_output.jsonl (and its sidecar and metrics) are written, output.jsonl is not', () => {
      expect(keys(rows(join(dir, 'unsafe_output.jsonl'))).sort()).toEqual(['0:0', '1:0']);
      expect(existsSync(join(dir, 'unsafe_output_failures.jsonl'))).toBe(true);
      expect(existsSync(join(dir, 'unsafe_output_aggregate_metrics.json'))).toBe(true);
      expect(existsSync(join(dir, 'output.jsonl'))).toBe(false);
      expect(existsSync(join(dir, 'output_failures.jsonl'))).toBe(false);
      expect(lines(join(dir, 'unsafe_output.jsonl'))).toHaveLength(2);
    });

    it('§6.113 the warning is printed exactly twice, the second time at the very end', () => {
      expect(outcome.lines.filter((l) => l === warning)).toHaveLength(2);
      expect(outcome.lines[outcome.lines.length - 1]).toBe(warning);
    });
  });
});
