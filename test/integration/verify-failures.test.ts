import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { statusCommand } from '../../src/cli/status-command.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { keysOf, readRows, runInProcess as run, sampleRun } from '../helpers/run-fixtures.js';
import { emptyMetrics, keyText, reward, startScriptedServer } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { runCli } from '../helpers/cli-process.js';
import { historyTextOf } from '../helpers/history-text.js';
import { successLine, tasks, writeFixture } from '../helpers/spec-fixtures.js';

const temporal = useSharedTemporal('verify-failures');
const client = useTemporalClient(temporal);
const server = closedAfterEach(startScriptedServer);

/** A stateless resources server that answers /verify with `reply(body)`: [status, body]. */
async function scriptedServer(reply: (row: Record<string, unknown>) => [number, unknown]): Promise<number> {
  const s = await server({
    aggregate: emptyMetrics,
    verify: (row) => {
      const [status, body] = reply(row);
      return { status, body };
    },
  });
  return s.port;
}

describe('/verify failure policy', () => {
  it('a 4xx reply is permanent for its row: a terminal verify_rejected sidecar row with status and excerpt; the rest succeed', async () => {
    const port = await scriptedServer((row) =>
      (row._ng_task_index as number) % 3 === 0
        ? [422, { detail: [{ type: 'missing', loc: ['body', 'expected_answer'], msg: 'Field required' }] }]
        : [200, { reward: 1.0 }],
    );
    const dir = tempDir();
    const d = await sampleRun(dir, port, { tasks: 30, repeats: 2 });
    const { result, error } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      batchSize: 8,
    });
    expect(error).toBeNull();
    const side = readRows(join(dir, 'out_failures.jsonl'));
    expect(side).toHaveLength(20);
    for (const r of side) {
      expect((r._ng_task_index as number) % 3).toBe(0);
      expect(r).toMatchObject({ _ng_failure_class: 'verify_rejected', _ng_failure_terminal: true, verify_status: 422, reward: 0 });
      expect(r.verify_error).toContain('Field required');
    }
    expect(readRows(d.output)).toHaveLength(40);
    expect(result!.rejected).toBe(20);
  });

  it('when the first 20 replies of a run are all rejections, the run stops with one clear error', async () => {
    const port = await scriptedServer(() => [404, { detail: 'Not Found' }]);
    const dir = tempDir();
    const d = await sampleRun(dir, port, { tasks: 40, repeats: 2 });
    const { error } = await run({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], concurrency: 4 });
    expect(error?.code).toBe(1);
    expect(error?.line).toMatch(/rejected the first 20 \/verify requests \(last: HTTP 404/);
    expect(readRows(d.output)).toHaveLength(0);
  });

  it("rejections that echo the row: the run's error names the last reply by its status; no response text on the terminal or in the history", async () => {
    const MARKER = 'ROWTEXTMARKER';
    const rows = tasks([...Array(24).keys()]);
    const f = writeFixture(tempDir(), {
      inputs: rows,
      successes: rows.map((r) => successLine(r).replace('"text":"', `"text":"${MARKER} `)),
    });
    // A server that quotes the row's response in its 4xx reply, as FastAPI validation errors can.
    const s = await server({
      aggregate: emptyMetrics,
      verify: (row) => ({ status: 400, body: { detail: `cannot grade ${JSON.stringify(row.response)}` } }),
    });
    const r = await runCli(['run', '--inputs', f.inputs, '--rollouts', f.rollouts, '-o', f.output, '--server', s.flag('rs')], temporal.env);
    expect(r.code, r.stderr).toBe(1);
    expect(JSON.stringify(s.verifyBodies)).toContain(MARKER);
    expect(await historyTextOf(client(), f.output)).not.toContain(MARKER);
    expect(r.stdout + r.stderr).not.toContain(MARKER);
    expect(r.stdout + r.stderr).toMatch(/rejected the first 20 \/verify requests \(last: HTTP 400\)\. /);
  });

  it('a flaky verifier (5xx, connection resets, hangs past the request timeout) still yields every row with its correct reward', async () => {
    const calm = await startReferenceServer({ port: 0, seed: 4 });
    const flaky = await startReferenceServer({ port: 0, errorRate: 0.15, resetRate: 0.05, hangRate: 0.02, seed: 4 });
    try {
      const dir = tempDir();
      const a = await sampleRun(join(dir, 'a'), calm.port, { tasks: 30, repeats: 3 });
      const b = await sampleRun(join(dir, 'b'), flaky.port, { tasks: 30, repeats: 3 });
      expect((await run({ inputs: a.inputsPath, rollouts: a.rolloutsPath, output: a.output, configs: [a.config] })).error).toBeNull();
      const flakyRun = await run({
        inputs: b.inputsPath,
        rollouts: b.rolloutsPath,
        output: b.output,
        configs: [b.config],
        requestTimeoutMs: 1000,
      });
      expect(flakyRun.error).toBeNull();
      const rewards = (path: string) => new Map(readRows(path).map((r) => [`${r._ng_task_index}:${r._ng_rollout_index}`, r.reward]));
      const expected = rewards(a.output);
      const got = rewards(b.output);
      expect(got.size).toBe(90);
      expect(new Set(keysOf(readRows(b.output))).size).toBe(90);
      expect(got).toEqual(expected);
      const s = flaky.stats();
      expect(s.verify_outcomes.error + s.verify_outcomes.reset + s.verify_outcomes.hang).toBeGreaterThan(0);
    } finally {
      await calm.close();
      await flaky.close();
    }
  });

  it('a verifier outage pauses the run; it continues by itself when the server is back', async () => {
    const first = await startReferenceServer({ port: 0, latencyMs: 20, seed: 1 });
    const port = first.port;
    const dir = tempDir();
    const d = await sampleRun(dir, port, { tasks: 40, repeats: 2 });
    const running = run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      concurrency: 2,
      batchSize: 10,
    });
    while (first.stats().requests.verify < 10) await new Promise((r) => setTimeout(r, 50));
    await first.close(); // connection refused from now on
    await new Promise((r) => setTimeout(r, 2500));
    const second = await startReferenceServer({ port, latencyMs: 1, seed: 1 });
    try {
      const { error } = await running;
      expect(error).toBeNull();
      const keys = keysOf(readRows(d.output));
      expect(keys).toHaveLength(80);
      expect(new Set(keys).size).toBe(80);
      expect(second.stats().requests.verify).toBeGreaterThan(0);
    } finally {
      await second.close();
    }
  });
  it('a row the server keeps answering 500 while it answers the others goes to the sidecar as transient after 3 attempts; --resume tries it again', async () => {
    let healed = false;
    const s = await server({
      aggregate: emptyMetrics,
      verify: (row) => (keyText(row) === '7:1' && !healed ? { status: 500, raw: '"ValueError: cannot grade this response"' } : reward(1.0)),
    });
    const dir = tempDir();
    const d = await sampleRun(dir, s.port, { tasks: 20, repeats: 2 });
    const args = { inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], batchSize: 8, rejudge: false };
    const first = await run(args);
    expect(first.error).toBeNull();
    // While it retries, the run says which line the server fails on.
    const line = readRows(d.rolloutsPath).findIndex((r) => keyText(r) === '7:1') + 1;
    expect(first.lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^Waiting: verifyBatch attempt \\d failed, Temporal retries it: 1 row\\(s\\) of the batch failed while the server answered other rows; .*rollouts\\.jsonl:${line} \\(key \\(7, 1\\)\\), attempt \\d: .*HTTP 500\\)$`,
        ),
      ),
    );
    const side = readRows(join(dir, 'out_failures.jsonl'));
    expect(side).toHaveLength(1);
    expect(side[0]).toMatchObject({
      _ng_task_index: 7,
      _ng_rollout_index: 1,
      reward: 0,
      _ng_failure_class: 'transient',
      verify_status: 500,
    });
    expect(side[0]).not.toHaveProperty('_ng_failure_terminal');
    expect(side[0].verify_error).toContain('cannot grade this response');
    // The reply's body (it may echo the row) is in the sidecar row only, never in the history.
    const history = await client().workflow.getHandle(workflowIdForOutput(d.output)).fetchHistory();
    expect(JSON.stringify(history)).not.toContain('cannot grade');
    expect(keysOf(readRows(d.output))).toHaveLength(39);
    expect(first.result!.failed).toBe(1);
    // 6 tries in each of 3 activity attempts; the other rows once each (plus the probes, which are rows already answered).
    expect(s.verifyBodies.filter((r) => keyText(r) === '7:1')).toHaveLength(18);
    healed = true;
    const resumed = await run({ ...args, resume: true });
    expect(resumed.error).toBeNull();
    expect(resumed.result!.done).toBe(1);
    expect(new Set(keysOf(readRows(d.output)))).toEqual(new Set(keysOf(readRows(d.inputsPath))));
  });

  it.each([
    ['whose connection is always reset', { reset: true }, /reset|ECONNRESET|socket/i],
    ['always answered slower than --request-timeout', { delayMs: 1500, status: 200, body: { reward: 1.0 } }, /timed? ?out|deadline/i],
  ])(
    'a row %s while the server answers the others goes to the sidecar as transient after 3 attempts, named by file:line and key',
    async (_label, bad, reason) => {
      const s = await server({ aggregate: emptyMetrics, verify: (row) => (keyText(row) === '3:0' ? bad : reward(1.0)) });
      const dir = tempDir();
      const d = await sampleRun(dir, s.port, { tasks: 10, repeats: 2 });
      const args = {
        inputs: d.inputsPath,
        rollouts: d.rolloutsPath,
        output: d.output,
        configs: [d.config],
        batchSize: 8,
        rejudge: false,
        requestTimeoutMs: 300,
      };
      const { error, result, lines } = await run(args);
      expect(error).toBeNull();
      const line = readRows(d.rolloutsPath).findIndex((r) => keyText(r) === '3:0') + 1;
      expect(lines).toContainEqual(
        expect.stringMatching(new RegExp(`^Waiting: .*rollouts\\.jsonl:${line} \\(key \\(3, 0\\)\\), attempt \\d`)),
      );
      const side = readRows(join(dir, 'out_failures.jsonl'));
      expect(side).toHaveLength(1);
      expect(side[0]).toMatchObject({
        _ng_task_index: 3,
        _ng_rollout_index: 0,
        reward: 0,
        _ng_failure_class: 'transient',
        verify_status: null,
      });
      expect(side[0].verify_error).toMatch(reason);
      expect(keysOf(readRows(d.output))).toHaveLength(19);
      expect(result!.failed).toBe(1);
    },
  );

  it('when every row answers 500 (the judge behind the server is down), no row is given up: the run waits and completes when it heals', async () => {
    let healAt = Infinity;
    const s = await server({
      aggregate: emptyMetrics,
      verify: () => {
        if (healAt === Infinity) healAt = Date.now() + 12_000; // longer than one attempt (6 tries, ≤ 7.75 s) plus the retry delay
        return Date.now() < healAt ? { status: 500, raw: '"JudgeUnavailable: upstream 502"' } : reward(1.0);
      },
    });
    const dir = tempDir();
    const d = await sampleRun(dir, s.port, { tasks: 20, repeats: 2 });
    const running = run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      batchSize: 8,
      concurrency: 8,
    });
    // `reverify status` from another terminal tells why the run waits.
    let over = false;
    void running.finally(() => (over = true));
    let status: string[] = [];
    while (!over && !status.some((l) => l.startsWith('Waiting: '))) {
      status = [];
      await statusCommand(d.output, (l) => status.push(l)).catch(() => undefined); // no run yet
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(status[0]).toMatch(/^Run reverify-out\.jsonl-[0-9a-f]+: RUNNING/);
    expect(status).toContainEqual(
      expect.stringMatching(/^Waiting: verifyBatch attempt \d+ failed, Temporal retries it: .* is unavailable: .*last: HTTP 500$/),
    );
    const { error, lines } = await running;
    expect(error).toBeNull();
    // So does the run command itself.
    expect(lines).toContainEqual(
      expect.stringMatching(/^Waiting: verifyBatch attempt 1 failed, Temporal retries it: .* is unavailable: .*last: HTTP 500$/),
    );
    expect(readRows(join(dir, 'out_failures.jsonl'))).toHaveLength(0);
    const keys = keysOf(readRows(d.output));
    expect(keys).toHaveLength(40);
    expect(new Set(keys).size).toBe(40);
    expect(s.verifyBodies.length).toBeGreaterThan(40);
  });
});
