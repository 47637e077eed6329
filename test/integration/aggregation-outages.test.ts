/**
 * `/aggregate_metrics` after every row is committed, against real HTTP servers and the shared
 * Temporal dev server:
 * - a server that is down (connection refused) or busy (503) is waited out without bound, the run
 *   saying why (`Waiting:`), and the run completes with its metrics file once it is back;
 * - a server that is up but whose aggregation keeps failing (500) is tried a bounded number of
 *   times, then the run ends with its rows complete and the reason;
 * - the body goes out with a `Content-Length` (a server that refuses chunked bodies works), and
 *   each agent entry of the metrics file carries the reply's `repeat_level_metrics` (`[]` when the
 *   server omits it).
 * Those through the workflow alone use short retry intervals (`aggregateRetry`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGGREGATION_SERVER_ERROR_TRIES } from '../../activities/aggregate-post.js';
import { buildRunSpec } from '../../src/cli/build-spec.js';
import { parseRunOptions } from '../../src/config/run-options.js';
import type { RunResult } from '../../src/contract/run-spec.js';
import { cacheDir } from '../../src/temporal/connection.js';
import { createReverifyWorker } from '../../src/temporal/worker.js';
import type { reverifyRun } from '../../workflows/reverify-run.js';
import { runCli } from '../helpers/cli-process.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { keysOf, readRows, runArgs, sampleRun } from '../helpers/run-fixtures.js';
import { startScriptedServer, type Reply, type Row, type ScriptedServer } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('aggregation-outages');
const client = useTemporalClient(temporal);
const server = closedAfterEach(startScriptedServer);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A working `/aggregate_metrics` reply: the mean reward and the row count. */
function meanReward(body: { verify_responses: Row[] }): Reply {
  const rewards = body.verify_responses.map((r) => r.reward as number);
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  return {
    status: 200,
    body: { agent_metrics: { 'mean/reward': mean, rows: rewards.length }, key_metrics: { 'mean/reward': mean }, group_level_metrics: [] },
  };
}

/** The metrics file's entries, by agent name. */
function metricsByAgent(path: string): Record<string, Record<string, unknown>> {
  const entries = JSON.parse(readFileSync(path, 'utf8')) as Array<Record<string, unknown>>;
  return Object.fromEntries(entries.map((e) => [(e.agent_ref as { name: string }).name, e]));
}

/** Runs the workflow on `s`'s sample data with short aggregation retry intervals; returns its result. */
async function runWorkflow(s: ScriptedServer, name: string) {
  const dir = tempDir();
  const d = await sampleRun(dir, s.port, { tasks: 6, repeats: 2 });
  const opts = parseRunOptions({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], maxAttempts: 1 });
  const spec = {
    ...(await buildRunSpec(opts, { heartbeatTimeoutMs: 10_000, maxAttempts: 1 })),
    aggregateRetry: { initialIntervalMs: 50, maximumIntervalMs: 200 },
  };
  const w = await createReverifyWorker({ address: temporal.address, namespace: temporal.namespace, cacheDir: cacheDir() });
  try {
    const handle = await client().workflow.start<typeof reverifyRun>('reverifyRun', {
      workflowId: `aggregation-outages-${name}-${process.pid}-${Date.now()}`,
      taskQueue: temporal.taskQueue,
      args: [spec],
    });
    const result: RunResult = await w.worker.runUntil(handle.result());
    return { dir, d, result };
  } finally {
    await w.close();
  }
}

describe('an outage of /aggregate_metrics is waited out', () => {
  it('down (connection refused) during aggregation, then back: `Waiting:` lines, then the metrics file and exit 0', async () => {
    let downAt = 0;
    const s: ScriptedServer = await server({
      aggregate: (body) => {
        if (downAt === 0) {
          // The first request finds the server going down: this connection and every other one
          // are dropped, and new ones are refused for 8 s.
          downAt = Date.now();
          void s.stop().then(() => sleep(8000).then(() => s.restart()));
          return { reset: true };
        }
        return meanReward(body);
      },
    });
    const dir = tempDir();
    const d = await sampleRun(dir, s.port, { tasks: 6, repeats: 2 });
    const r = await runCli([...runArgs(d), '--no-rejudge'], temporal.env, 120_000);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(Date.now() - downAt).toBeGreaterThan(8000);
    expect(r.stdout).toMatch(
      new RegExp(
        `^Waiting: aggregateRun attempt 1 failed, Temporal retries it: resources server 'mcqa_rs' at ${s.url}: POST /aggregate_metrics failed: `,
        'm',
      ),
    );
    const metrics = join(dir, 'out_aggregate_metrics.json');
    expect(r.stdout).toContain(`Aggregate metrics: ${metrics}`);
    expect(Object.keys(metricsByAgent(metrics)).sort()).toEqual(['agent_a', 'agent_b']);
    expect(existsSync(join(dir, '.out.jsonl.reverify'))).toBe(false);
  });

  it('refused, then 503 on many more tries than any fixed cap: the run waits and completes with its metrics', async () => {
    let busy = 0;
    const s: ScriptedServer = await server({
      aggregate: (body) => {
        if (busy === 0) void s.stop().then(() => sleep(1500).then(() => s.restart()));
        return ++busy <= 20 ? { status: 503, raw: '"overloaded"' } : meanReward(body);
      },
    });
    const { dir, d, result } = await runWorkflow(s, 'busy');
    expect(result.aggregationError).toBeNull();
    expect(result.metricsPath).toBe(join(dir, 'out_aggregate_metrics.json'));
    expect(Object.keys(metricsByAgent(result.metricsPath!)).sort()).toEqual(['agent_a', 'agent_b']);
    expect(s.aggregateBodies.length).toBeGreaterThan(20);
    expect(keysOf(readRows(d.output))).toHaveLength(12);
  });
});

describe('an aggregation that cannot succeed ends the run', () => {
  it(`500 while the server is up (it answers GET /): ${AGGREGATION_SERVER_ERROR_TRIES} tries per group, then the reason; rows complete`, async () => {
    const s = await server({ aggregate: () => ({ status: 500, raw: `"ValueError('Out of range float values are not JSON compliant')"` }) });
    const { dir, d, result } = await runWorkflow(s, 'server-error');
    expect(result.metricsPath).toBeNull();
    expect(result.aggregationError).toBe(
      `resources server 'mcqa_rs' at ${s.url}: POST /aggregate_metrics failed: HTTP 500: ValueError('Out of range float values are not JSON compliant') ` +
        `(${AGGREGATION_SERVER_ERROR_TRIES} tries, while the server is up: it answers GET /)`,
    );
    // Each agent's group tried at most the bounded number of times (one activity attempt); the first
    // group to use them all up stops the other, whose last try may not have been sent yet.
    const tries = new Map<string, number>();
    for (const b of s.aggregateBodies) {
      const agent = (b.verify_responses[0].agent_ref as { name: string }).name;
      tries.set(agent, (tries.get(agent) ?? 0) + 1);
    }
    expect(Math.max(...tries.values())).toBe(AGGREGATION_SERVER_ERROR_TRIES);
    for (const n of tries.values()) expect(n).toBeLessThanOrEqual(AGGREGATION_SERVER_ERROR_TRIES);
    expect(s.requests.filter((q) => q.method === 'GET' && q.url === '/').length).toBeGreaterThanOrEqual(AGGREGATION_SERVER_ERROR_TRIES);
    expect(keysOf(readRows(d.output))).toHaveLength(12);
    expect(existsSync(join(dir, 'out_aggregate_metrics.json'))).toBe(false);
    expect(existsSync(join(dir, '.out.jsonl.reverify'))).toBe(false);
  });
});

describe('the body and the metrics file', () => {
  it('a server that refuses chunked bodies gets each body with its Content-Length; repeat_level_metrics is kept, [] when omitted', async () => {
    const repeats = [{ _ng_rollout_index: 0, sample_count: 6, missing_count: 0, 'mean/reward': 1.0 }];
    const s = await server({
      requireContentLength: true,
      aggregate: (body) => {
        const reply = meanReward(body);
        const agent = (body.verify_responses[0].agent_ref as { name: string }).name;
        // agent_a's server replies as NeMo Gym 0.7.0 (with repeat_level_metrics and perf_summary), agent_b's omits it.
        return agent === 'agent_a'
          ? { ...reply, body: { ...(reply.body as object), repeat_level_metrics: repeats, perf_summary: null } }
          : reply;
      },
    });
    const dir = tempDir();
    const d = await sampleRun(dir, s.port, { tasks: 6, repeats: 2 });
    const r = await runCli([...runArgs(d), '--no-rejudge'], temporal.env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const posts = s.requests.filter((q) => q.url === '/aggregate_metrics');
    expect(posts).toHaveLength(2);
    for (const q of posts) {
      expect(q.headers['transfer-encoding']).toBeUndefined();
      expect(q.headers['content-length']).toBe(String(Buffer.byteLength(q.text)));
    }
    const file = metricsByAgent(join(dir, 'out_aggregate_metrics.json'));
    for (const agent of ['agent_a', 'agent_b']) {
      expect(Object.keys(file[agent])).toEqual([
        'agent_ref',
        'agent_metrics',
        'key_metrics',
        'group_level_metrics',
        'repeat_level_metrics',
      ]);
    }
    expect(file.agent_a.repeat_level_metrics).toEqual(repeats);
    expect(file.agent_b.repeat_level_metrics).toEqual([]);
  });
});
