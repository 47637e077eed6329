/**
 * Start → first `/verify` of a large run, and what the workflow did before it (issue 33, item 3:
 * a 10^7-row run's plan), without verifying the rest of it:
 *
 *   npx tsx bench/first-request.ts --data bench/out/data/rows10000000-resp200-agents2 [--repeat 1]
 *                                  [--out bench/out/first-request]
 *
 * `--data`: a directory of bench/lib/data.ts (`scale.ts` and `throughput.ts` write them). Each
 * repeat, on a fresh embedded Temporal dev server (own state dir under `--out`), runs `reverify run
 * … --no-rejudge --disable-aggregation --overwrite` as a user runs it against a fresh reference
 * server (latency 0), takes the time from its spawn to the first `/verify` the server saw (its `GET
 * /stats`, polled every 100 ms) and the command's peak RSS by then (VmHWM: its in-process worker
 * planned and counted), then stops the command (a Ctrl-C) and prints each activity of the
 * workflow before the first batch: when it completed (seconds after the spawn) and the command's
 * largest RSS sampled since the activity before it completed (VmRSS, polled with `/stats`).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { CLIENT_CHANNEL_ARGS } from '../src/temporal/connection.js';
import { workflowIdForOutput } from '../src/temporal/workflow-id.js';
import { RESOURCES_SERVER } from './lib/data.js';
import {
  type Spawned,
  benchEnv,
  freshStateDir,
  runBench,
  sleep,
  spawnCli,
  startDevServer,
  startReferenceServerProc,
  stopDevServer,
} from './lib/procs.js';
import { machineLine } from './lib/table.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    repeat: { type: 'string', default: '1' },
    out: { type: 'string', default: 'bench/out/first-request' },
  },
});
if (!values.data) throw new Error('--data DIR is required (a directory that bench/scale.ts or bench/throughput.ts wrote)');
const data = resolve(values.data);
const out = resolve(values.out);

/** Each activity before the first `verifyBatch`: its name and when it completed (epoch ms). */
async function phases(address: string, workflowId: string): Promise<Array<{ name: string; at: number }>> {
  const connection = await Connection.connect({ address, channelArgs: CLIENT_CHANNEL_ARGS });
  try {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    const events = history.events ?? [];
    const ms = (e: (typeof events)[number]) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
    const names = new Map<string, string>();
    const done: Array<{ name: string; at: number }> = [];
    for (const e of events) {
      const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
      if (scheduled) names.set(String(e.eventId), scheduled);
      const completed = e.activityTaskCompletedEventAttributes;
      if (!completed) continue;
      const name = names.get(String(completed.scheduledEventId)) ?? '?';
      if (name === 'verifyBatch') break;
      done.push({ name, at: ms(e) });
    }
    return done;
  } finally {
    await connection.close();
  }
}

/** Waits for the first `/verify` the reference server counts; the command's RSS (KiB) meanwhile, by epoch ms. */
async function firstVerify(url: string, cli: Spawned): Promise<Array<{ at: number; rssKiB: number }>> {
  let ended = false;
  void cli.exited.then(() => (ended = true));
  const samples: Array<{ at: number; rssKiB: number }> = [];
  for (;;) {
    const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${cli.pid}/status`, 'utf8'))?.[1];
    samples.push({ at: Date.now(), rssKiB: Number(rss) });
    const stats = (await (await fetch(`${url}/stats`)).json()) as { requests: { verify: number } };
    if (stats.requests.verify > 0) return samples;
    if (ended) throw new Error('reverify run exited before its first /verify');
    await sleep(100);
  }
}

runBench(async () => {
  console.log(machineLine());
  const stateDir = join(out, 'state');
  const config = join(data, 'gym_config.yaml');
  for (let r = 1; r <= Number(values.repeat); r++) {
    freshStateDir(stateDir);
    mkdirSync(join(out, 'run'), { recursive: true });
    const server = startDevServer(stateDir);
    const env = benchEnv(stateDir);
    const ref = await startReferenceServerProc({ latencyMs: 0, logPath: join(out, 'reference-server.log') });
    const output = join(out, 'run', 'reverified.jsonl');
    const args = ['run', '--inputs', join(data, 'rollouts_materialized_inputs.jsonl'), '--rollouts', join(data, 'rollouts.jsonl')];
    args.push('-o', output, '--config', config, '--server', `${RESOURCES_SERVER}=${ref.url}`);
    args.push('--no-rejudge', '--disable-aggregation', '--overwrite');
    const t0 = performance.now();
    const cli = spawnCli(args, { env, logPath: join(out, 'reverify-run.log') });
    const start = Date.now();
    const samples = await firstVerify(ref.url, cli);
    const seconds = (performance.now() - t0) / 1000;
    // The command's peak so far (it runs the worker: plan, count and first batches).
    const peak = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${cli.pid}/status`, 'utf8'))?.[1];
    // Stopped as a Ctrl-C stops it; the run is left open (not cancelled: that would count its coverage
    // over the 10^7 rows first) and goes with the dev server's state dir.
    cli.child.kill('SIGINT');
    await cli.exited;
    await ref.stop();
    const rows = (JSON.parse(readFileSync(join(data, 'meta.json'), 'utf8')) as { rows: number }).rows;
    console.log(
      `repeat ${r}: ${rows} rows, spawn → first /verify ${seconds.toFixed(1)} s, the command's VmHWM ${Math.round(Number(peak) / 1024)} MiB; ${machineLine()}`,
    );
    let from = start;
    for (const { name, at } of await phases(server.address, workflowIdForOutput(output))) {
      const during = samples.filter((x) => x.at > from && x.at <= at).map((x) => x.rssKiB);
      const peakMiB = during.length === 0 ? '?' : String(Math.round(Math.max(...during) / 1024));
      console.log(
        `  ${name.padEnd(20)} done at ${((at - start) / 1000).toFixed(1)} s after the spawn, the command's RSS up to ${peakMiB} MiB`,
      );
      from = at;
    }
    stopDevServer(stateDir);
  }
});
