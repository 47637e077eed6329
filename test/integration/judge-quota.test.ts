import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/run-command.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { captureIo, sampleRun } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('judge-quota');
const proc = { worker: true, heartbeatTimeoutMs: 10_000 };
const server = closedAfterEach(startReferenceServer);

/** The output's lines, sorted (rows are appended in completion order). */
const sortedLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).sort();

/** `reverify run` of a sample run against `port`, 16 in flight in batches of 20. */
async function runAgainst(port: number) {
  const d = await sampleRun(tempDir(), port, { tasks: 60, repeats: 4 });
  const result = await runCommand(
    {
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      concurrency: 16,
      batchSize: 20,
      maxAttempts: 1,
    },
    proc,
    captureIo(),
  );
  return { result, main: sortedLines(d.output), sidecar: sortedLines(d.output.replace(/\.jsonl$/, '_failures.jsonl')) };
}

describe('a judge with a quota (reference server --rpm)', () => {
  it('the reference server refuses beyond its quota with 429 and a Retry-After, and counts repeated refusals', async () => {
    const rs = await server({ rpm: 60, rpmBurst: 1 });
    const body = JSON.stringify({
      responses_create_params: { input: [] },
      response: { output: [] },
      expected_answer: 'A',
      _ng_task_index: 0,
      _ng_rollout_index: 0,
    });
    const post = () => fetch(`${rs.url}/verify`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    expect((await post()).status).toBe(200);
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toEqual({ detail: 'Rate limit reached: 60 requests per minute' });
    await post(); // came back too early: refused again
    expect(rs.stats()).toMatchObject({ verify_throttled: 2, verify_refused_again: 1, longest_refusal_streak: 2, verify_repeats: 0 });
    expect(rs.stats().verify_outcomes.success).toBe(1);
  });

  it('a run against a quota completes every row, no row refused twice in a row, the outputs those of an unlimited judge', async () => {
    // 240 rows at 1,200 per minute (20/s, one second's worth saved up), 16 in flight at 20 ms:
    // many first tries are refused.
    const limited = await server({ rpm: 1200, latencyMs: 20, seed: 5 });
    const quota = await runAgainst(limited.port);
    const stats = limited.stats();
    expect(stats.verify_throttled).toBeGreaterThan(0);
    expect(stats.longest_refusal_streak).toBe(1);
    expect(stats.verify_refused_again).toBe(0);
    expect(stats.verify_outcomes.success).toBe(240);
    expect(stats.verify_repeats).toBe(0);

    const free = await server({ latencyMs: 20, seed: 5 });
    const plain = await runAgainst(free.port);
    expect(quota.result.done).toBe(240);
    expect(quota.main).toHaveLength(240);
    expect(quota.sidecar).toEqual([]);
    expect(quota.main).toEqual(plain.main);
    expect(quota.sidecar).toEqual(plain.sidecar);
  });
});
