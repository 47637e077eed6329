/** What a `reverify worker` process logs while a verifier is down: one line per retried batch. */
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/run-command.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { captureIo, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal, useTemporalClient } from '../helpers/temporal-env.js';
import { sigkill, startWorkerProcess } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('wlog');
// Every /verify answered with HTTP 500: an outage.
const rs = useReferenceServer({ port: 0, errorRate: 1, seed: 4 });
const client = useTemporalClient(temporal);

describe('worker log during an outage', () => {
  it('one line per failed batch attempt (what, attempt, next try); no task token, no stack trace', { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 4, repeats: 2 });
    const worker = await startWorkerProcess(temporal.env);
    let log = '';
    worker.stdout!.on('data', (b: Buffer) => (log += b.toString()));
    worker.stderr!.on('data', (b: Buffer) => (log += b.toString()));
    const running = runCommand(
      { inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config], concurrency: 2, batchSize: 4 },
      { worker: false, heartbeatTimeoutMs: 10_000 },
      captureIo(),
    ).catch((err: unknown) => err);
    try {
      const end = Date.now() + 90_000;
      while (!/attempt 2 failed/.test(log) && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    } finally {
      await client().workflow.getHandle(workflowIdForOutput(d.output)).terminate('test over');
      await running;
      await sigkill(worker);
    }
    const failures = log.split('\n').filter((l) => l.includes('failed'));
    expect(failures.length).toBeGreaterThanOrEqual(2);
    for (const line of failures)
      expect(line).toMatch(/\[WARN\] verifyBatch \d+ of reverify-out\.jsonl-\S+ attempt \d+ failed: .*HTTP 500.*; next try in about \d+s$/);
    expect(log).not.toMatch(/taskToken|^\s+at /m);
  });
});
