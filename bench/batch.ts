/**
 * The verify path alone: `verifyBatch` activities in this process (mock activity contexts, no
 * Temporal server, no workflow), against the plain load generator on the same payloads:
 *
 *   npx tsx bench/batch.ts [--rows 20000] [--response-bytes 5000] [--latency 0] [--concurrency 64]
 *                          [--batch-size 500] [--window 4] [--repeat 2] [--cpu-prof DIR] [--paired]
 *
 * Plans a generated run once (`planRun`, as bench/plan.ts), starts a fresh reference server in its
 * own process, then per repeat: (a) the load generator (`driveCapacity`: an undici Pool, 1,000
 * payloads prebuilt and cycled) and (b) every batch of the plan through `verifyBatch`, `--window` batches at a
 * time with `concurrency / window` lanes each, as the workflow launches them (without its commits
 * and round trips). Prints rows/s and this process's CPU µs per row of each, and b/a of both:
 * the per-row cost of the activity's own path (reading, payloads, replies, routing, part files),
 * measured without the rest of a run. `--cpu-prof DIR` writes a profile of (b) (the first repeat);
 * read it with `npx tsx bench/profile-top.ts DIR`. `--paired`: the batches also report the live
 * estimate's per-task sums (a run with the estimate on, as `reverify run` launches them).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Session } from 'node:inspector/promises';
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivityDeps } from '../activities/deps.js';
import { planRun } from '../activities/plan-run.js';
import { verifyBatch, type VerifyBatchRequest } from '../activities/verify-batch.js';
import { loadGymConfigs } from '../src/config/gym-config.js';
import { routingFromGymConfig } from '../src/config/routing.js';
import type { BatchResult } from '../src/contract/run-spec.js';
import { driveCapacity, prebuildPayloads } from './lib/clients.js';
import { parseCount, RESOURCES_SERVER, writeRunFiles } from './lib/data.js';
import { runBench, startReferenceServerProc } from './lib/procs.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    'response-bytes': { type: 'string', default: '5000' },
    latency: { type: 'string', default: '0' },
    concurrency: { type: 'string', default: '64' },
    'batch-size': { type: 'string', default: '500' },
    window: { type: 'string', default: '4' },
    repeat: { type: 'string', default: '2' },
    'cpu-prof': { type: 'string' },
    paired: { type: 'boolean', default: false },
  },
});

const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;

runBench(async () => {
  const rows = parseCount('--rows', values.rows);
  const concurrency = parseCount('--concurrency', values.concurrency);
  const batchSize = parseCount('--batch-size', values['batch-size']);
  const window = parseCount('--window', values.window);
  const out = resolve('bench/out/batch');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const files = await writeRunFiles(
    resolve('bench/out/data', `rows${rows}-resp${values['response-bytes']}-agents2`),
    { rows, responseBytes: parseCount('--response-bytes', values['response-bytes']), agents: 2 },
    true,
  );
  const routing = routingFromGymConfig(await loadGymConfigs([files.configPath]), {});
  const planDir = join(out, 'plan');
  const plan = await new MockActivityEnvironment().run<
    [Parameters<typeof planRun>[0]],
    Awaited<ReturnType<typeof planRun>>,
    typeof planRun
  >(planRun, {
    inputsPath: files.inputsPath,
    rolloutsPath: files.rolloutsPath,
    workDir: planDir,
    routing,
    limit: null,
    judgeFailedOnly: false,
    resume: false,
    outputs: { output: join(out, 'out.jsonl'), sidecar: join(out, 'out_failures.jsonl') },
    outputsCleared: true,
    maxAttempts: 1,
    repairTruncated: false,
  });
  const server = await startReferenceServerProc({ latencyMs: Number(values.latency), logPath: join(out, 'reference-server.log') });
  // Few prebuilt payloads (cycled): (b) runs in this process, and a big heap of them would slow its GC.
  const { payloads } = await prebuildPayloads(files.inputsPath, files.rolloutsPath, Math.min(rows, 1000));
  console.log(
    `verify path alone: ${plan.rows} rows, concurrency ${concurrency} (${window} batches of ${batchSize} rows, ` +
      `${Math.ceil(concurrency / window)} lanes each), verifier latency ${values.latency} ms`,
  );
  const deps = createActivityDeps();
  const run = verifyBatch(deps);
  const batches = Math.ceil(plan.rows / batchSize);
  const lanes = Math.max(1, Math.ceil(concurrency / window));

  const verifyAll = async (workDir: string) => {
    mkdirSync(workDir, { recursive: true });
    let next = 0;
    const loop = async () => {
      while (next < batches) {
        const batch = next++;
        const req: VerifyBatchRequest = {
          inputsPath: files.inputsPath,
          plan,
          serverUrls: { [RESOURCES_SERVER]: server.url },
          workDir,
          round: 0,
          batch,
          from: batch * batchSize,
          to: Math.min(plan.rows, (batch + 1) * batchSize),
          parallelism: lanes,
          requestTimeoutMs: 60_000,
          rejectGuard: 0,
          ...(values.paired ? { paired: true } : {}),
        };
        const r = await new MockActivityEnvironment({ heartbeatTimeoutMs: 30_000 }).run<[VerifyBatchRequest], BatchResult, typeof run>(
          run,
          req,
        );
        if (r.main !== req.to - req.from) throw new Error(`batch ${batch}: ${r.main} rows in the main part, expected ${req.to - req.from}`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(window, batches) }, loop));
  };

  await driveCapacity(server.url, payloads, Math.min(2000, rows), concurrency); // warm-up
  await verifyAll(join(out, 'warm'));
  const lines: string[] = [];
  for (let i = 0; i < Number(values.repeat); i++) {
    const ca = process.cpuUsage();
    const a = await driveCapacity(server.url, payloads, plan.rows, concurrency);
    const cpuA = cpuMs(process.cpuUsage(ca));
    const session = i === 0 && values['cpu-prof'] ? new Session() : null;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const cb = process.cpuUsage();
    const t0 = performance.now();
    await verifyAll(join(out, `work${i}`));
    const secondsB = (performance.now() - t0) / 1000;
    const cpuB = cpuMs(process.cpuUsage(cb));
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(values['cpu-prof']!, { recursive: true });
      await writeFile(join(values['cpu-prof']!, 'batch.cpuprofile'), JSON.stringify(profile));
      session.disconnect();
    }
    const rateA = plan.rows / ((a.endMs - a.startMs) / 1000);
    const rateB = plan.rows / secondsB;
    const usA = (cpuA * 1000) / plan.rows;
    const usB = (cpuB * 1000) / plan.rows;
    lines.push(
      `repeat ${i + 1}: (a) load generator ${rateA.toFixed(0)} rows/s, ${usA.toFixed(0)} µs CPU/row; ` +
        `(b) verifyBatch ${rateB.toFixed(0)} rows/s, ${usB.toFixed(0)} µs CPU/row; b/a rows/s ${(rateB / rateA).toFixed(2)}, CPU ${(usB / usA).toFixed(2)}×`,
    );
    console.log(lines[lines.length - 1]);
  }
  await deps.close();
  await server.stop();
});
