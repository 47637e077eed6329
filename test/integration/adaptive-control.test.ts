import { describe, expect, it } from 'vitest';
import { controlCommand } from '../../src/cli/control-command.js';
import { queryProgress } from '../../src/cli/query-progress.js';
import { runCommand } from '../../src/cli/run-command.js';
import type { Progress } from '../../src/contract/run-spec.js';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { captureIo, keysOf, readRows, sampleRun } from '../helpers/run-fixtures.js';
import { emptyMetrics, reward, startScriptedServer, type Reply } from '../helpers/scripted-server.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';

const temporal = useSharedTemporal('adaptive');
const proc = { worker: true, heartbeatTimeoutMs: 10_000 };
const client = useTemporalClient(temporal);
const server = closedAfterEach(startScriptedServer);

/** A judge that takes `latencyMs` and answers 429 (Retry-After: 0) beyond `capacity` requests in flight. */
async function rateLimitedJudge(capacity: number, latencyMs: number) {
  const stats = { inFlight: 0, accepted: 0, throttled: 0 };
  const judge = await server({
    aggregate: emptyMetrics,
    verify: () => {
      if (stats.inFlight >= capacity) {
        stats.throttled++;
        return { status: 429, body: { detail: 'Too Many Requests' }, headers: { 'retry-after': '0' } };
      }
      stats.inFlight++;
      stats.accepted++;
      return new Promise<Reply>((resolve) =>
        setTimeout(() => {
          stats.inFlight--;
          resolve(reward(1.0));
        }, latencyMs),
      );
    },
  });
  return { port: judge.port, stats };
}

/** Polls a run's progress until `done` resolves; returns every answer seen. */
function watch(output: string, done: Promise<unknown>): Promise<Progress[]> {
  const seen: Progress[] = [];
  let over = false;
  void done.finally(() => (over = true));
  return (async () => {
    const handle = client().workflow.getHandle(workflowIdForOutput(output));
    while (!over) {
      const p = await queryProgress(handle);
      if (p) seen.push(p);
      await new Promise((r) => setTimeout(r, 100));
    }
    return seen;
  })();
}

describe('adaptive concurrency and operator control', () => {
  it('lowers the requests in flight when the verifier answers 429, and still completes every row', async () => {
    const judge = await rateLimitedJudge(4, 15);
    const dir = tempDir();
    const d = await sampleRun(dir, judge.port, { tasks: 150, repeats: 4 });
    const running = runCommand(
      {
        inputs: d.inputsPath,
        rollouts: d.rolloutsPath,
        output: d.output,
        configs: [d.config],
        concurrency: 32,
        batchSize: 16,
        maxAttempts: 1,
      },
      proc,
      captureIo(),
    );
    const seen = await watch(d.output, running);
    await running;
    expect(judge.stats.throttled).toBeGreaterThan(0);
    expect(Math.min(...seen.filter((p) => p.phase === 'verify').map((p) => p.effectiveConcurrency))).toBeLessThanOrEqual(8);
    const keys = keysOf(readRows(d.output));
    expect(keys).toHaveLength(600);
    expect(new Set(keys).size).toBe(600);
  });

  it('`reverify control` pauses, resumes and re-caps a live run from another process', async () => {
    // 400 rows at 8 in flight and 40 ms take 2 s unpaused: the pause below lands well before the end.
    const rs = await startReferenceServer({ port: 0, latencyMs: 40, seed: 1 });
    try {
      const dir = tempDir();
      const d = await sampleRun(dir, rs.port, { tasks: 100, repeats: 4 });
      const running = runCommand(
        {
          inputs: d.inputsPath,
          rollouts: d.rolloutsPath,
          output: d.output,
          configs: [d.config],
          concurrency: 8,
          batchSize: 10,
          maxAttempts: 1,
        },
        proc,
        captureIo(),
      );
      while (rs.stats().requests.verify < 20) await new Promise((r) => setTimeout(r, 50));
      const out: string[] = [];
      await controlCommand({ output: d.output, pause: true, concurrency: 4 }, (l) => out.push(l));
      await new Promise((r) => setTimeout(r, 1500)); // batches in flight finish
      const frozen = rs.stats().requests.verify;
      await new Promise((r) => setTimeout(r, 1000));
      expect(rs.stats().requests.verify).toBe(frozen); // nothing new starts while paused
      expect(frozen).toBeLessThan(400);
      const p = (await queryProgress(client().workflow.getHandle(workflowIdForOutput(d.output)), 10_000))!;
      expect(p).toMatchObject({ paused: true, concurrency: 4 });
      rs.resetStats();
      await controlCommand({ output: d.output, unpause: true }, (l) => out.push(l));
      const result = await running;
      expect(result.done).toBe(400);
      expect(rs.stats().peak_verify_in_flight).toBeLessThanOrEqual(4);
      expect(out).toHaveLength(3);
      expect(p.messages).toContain('Paused by an operator: batches in flight finish, no new one starts');
    } finally {
      await rs.close();
    }
  });

  it('`reverify control` on an output with no live run is one clear error', async () => {
    const dir = tempDir();
    await expect(controlCommand({ output: `${dir}/none.jsonl`, pause: true }, () => undefined)).rejects.toThrow(/no live run writes/);
  });
});
