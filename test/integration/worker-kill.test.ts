import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/run-command.js';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';
import { startReferenceServer, type ReferenceServer } from '../../src/reference-server/server.js';
import { progressQuery } from '../../workflows/definitions.js';
import { captureIo, keysOf, readRows, sampleRun } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { sigkill, startWorkerProcess } from '../helpers/worker-process.js';

const temporal = useSharedTemporal('kill');

let rs: ReferenceServer;
let client: Client;
beforeAll(async () => {
  rs = await startReferenceServer({ port: 0, latencyMs: 40, seed: 2 });
  client = new Client({ connection: await Connection.connect({ address: temporal.address }), namespace: temporal.namespace });
});
afterAll(async () => {
  await rs.close();
  await client.connection.close();
});

const sortedLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).sort();

describe('a worker SIGKILLed in the middle of a run', () => {
  it('loses no row and duplicates none: the run completes on a new worker with the same content as an undisturbed run', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs.port, { tasks: 60, repeats: 5 });
    const base = { inputs: d.inputsPath, rollouts: d.rolloutsPath, configs: [d.config], concurrency: 4, batchSize: 10 };

    // Undisturbed run, in-process worker.
    const calm = join(dir, 'calm.jsonl');
    await runCommand({ ...base, output: calm }, { worker: true, heartbeatTimeoutMs: 3000 }, captureIo());
    rs.resetStats();

    // Disturbed run: the work is done by separate worker processes; the first is killed mid-run.
    const output = join(dir, 'killed.jsonl');
    let worker = await startWorkerProcess(temporal.env);
    const running = runCommand({ ...base, output }, { worker: false, heartbeatTimeoutMs: 3000 }, captureIo());
    const handle = client.workflow.getHandle(workflowIdForOutput(output));
    let atKill = { done: 0, inFlightRows: 0 };
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      const p = await handle.query(progressQuery).catch(() => null);
      if (p && p.done >= 60) {
        atKill = { done: p.done, inFlightRows: p.inFlightRows };
        break;
      }
    }
    await sigkill(worker);
    worker = await startWorkerProcess(temporal.env);
    try {
      const result = await running;
      expect(result.done).toBe(300);
    } finally {
      await sigkill(worker);
    }

    expect(atKill.done).toBeLessThan(300); // the kill really happened mid-run
    const rows = readRows(output);
    expect(rows).toHaveLength(300);
    expect(new Set(keysOf(rows)).size).toBe(300);
    expect(sortedLines(output)).toEqual(sortedLines(calm));
    expect(readFileSync(join(dir, 'killed_failures.jsonl'), 'utf8')).toBe('');
    // Only rows that were in flight at the kill may have been sent twice.
    expect(rs.stats().requests.verify).toBeLessThanOrEqual(300 + atKill.inFlightRows);
    expect(rs.stats().verify_repeats).toBeLessThanOrEqual(atKill.inFlightRows);
  });
});
