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
 * planned and counted), then stops the command (a Ctrl-C) and prints each activity of the workflow
 * before the first batch: when it completed (seconds after the spawn) and the command's largest RSS
 * since the activity before it (VmRSS sampled every 100 ms: bench/lib/rss.ts).
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
import { fmtMiB, peakBetween, RssSampler } from './lib/rss.js';
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

/** Waits for the first `/verify` the reference server counts. */
async function firstVerify(url: string, cli: Spawned): Promise<void> {
  let ended = false;
  void cli.exited.then(() => (ended = true));
  for (;;) {
    const stats = (await (await fetch(`${url}/stats`)).json()) as { requests: { verify: number } };
    if (stats.requests.verify > 0) return;
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
    // The history's times are epoch ms, the samples' performance.now(): one offset between them.
    const epochOffset = Date.now() - performance.now();
    const t0 = performance.now();
    const cli = spawnCli(args, { env, logPath: join(out, 'reverify-run.log') });
    const rss = new RssSampler(100);
    rss.watch('command', cli.pid);
    await firstVerify(ref.url, cli);
    const seconds = (performance.now() - t0) / 1000;
    // The command's peak so far (it runs the worker: plan, count and first batches).
    const peak = rss.stop().get('command')!;
    // Stopped as a Ctrl-C stops it; the run is left open (not cancelled: that records its unstarted
    // rollouts first, ≈ 2 minutes at 10^7) and goes with the dev server's state dir.
    cli.child.kill('SIGINT');
    await cli.exited;
    await ref.stop();
    const rows = (JSON.parse(readFileSync(join(data, 'meta.json'), 'utf8')) as { rows: number }).rows;
    console.log(
      `repeat ${r}: ${rows} rows, spawn → first /verify ${seconds.toFixed(1)} s, the command's VmHWM ${fmtMiB(peak.hwmKiB)} MiB; ${machineLine()}`,
    );
    let from = t0;
    for (const { name, at } of await phases(server.address, workflowIdForOutput(output))) {
      const to = at - epochOffset;
      const during = peakBetween(peak, from, to);
      console.log(
        `  ${name.padEnd(20)} done at ${((to - t0) / 1000).toFixed(1)} s after the spawn, the command's RSS up to ${Number.isNaN(during) ? '?' : fmtMiB(during)} MiB`,
      );
      from = to;
    }
    stopDevServer(stateDir);
  }
});
