/**
 * `reverify run` against a judge with a quota (issue 33, item 2): the reference server with
 * `--rpm N` answers 429 + Retry-After beyond N requests per minute; reverify's adaptive limit must
 * settle near the concurrency the quota takes (quota × mean latency), no row may be refused twice
 * in a row, and the run's throughput must reach ≥ 0.95 × the quota.
 *
 *   npx tsx bench/quota.ts [--rpm 600,3000] [--minutes 3] [--latency-ms 1000] [--latency-spread 0.5]
 *                          [--concurrency 256] [--batch-size auto] [--response-bytes 2000] [--out bench/out/quota]
 *
 * Per quota: a fresh reference server in its own process (`--rpm N --latency-ms L
 * --latency-spread σ`), a run of `rpm × minutes` rows (`reverify run … --no-rejudge
 * --disable-aggregation --overwrite`) on an embedded Temporal dev server; the server's `/stats`
 * polled every 250 ms and the run's progress query (its limit in force) every second. Prints the
 * throughput over the whole run (first request to last answer) and over its second half (up to 95 %
 * of the rows: the last batches end with fewer rows than lanes), each
 * against the quota; 429s, the longest run of consecutive 429s of one row, and the settled limit
 * (median of the second half) against the fit (quota/s × mean latency, mean = L × e^(σ²/2)).
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { queryProgress } from '../src/cli/query-progress.js';
import { workflowIdForOutput } from '../src/temporal/workflow-id.js';
import { RESOURCES_SERVER, writeRunFiles } from './lib/data.js';
import { median } from './lib/median.js';
import {
  benchEnv,
  freshStateDir,
  runBench,
  sleep,
  spawnCli,
  startDevServer,
  startReferenceServerProc,
  stopDevServer,
} from './lib/procs.js';
import { fixed, machineLine, ratio, table } from './lib/table.js';

const { values } = parseArgs({
  options: {
    rpm: { type: 'string', default: '600,3000' },
    minutes: { type: 'string', default: '3' },
    'latency-ms': { type: 'string', default: '1000' },
    'latency-spread': { type: 'string', default: '0.5' },
    concurrency: { type: 'string', default: '256' },
    /** `auto`: ten seconds of the quota (rpm / 6): enough rows per lane that batch ends do not idle the window. */
    'batch-size': { type: 'string', default: 'auto' },
    'response-bytes': { type: 'string', default: '2000' },
    out: { type: 'string', default: 'bench/out/quota' },
  },
});

const quotas = values.rpm.split(',').map(Number);
const minutes = Number(values.minutes);
const latencyMs = Number(values['latency-ms']);
const spread = Number(values['latency-spread']);
const out = resolve(values.out);

/** What the reference server's `/stats` says (the fields this bench reads). */
interface QuotaStats {
  requests: { verify: number };
  verify_in_flight: number;
  verify_outcomes: Record<string, number>;
  verify_throttled: number;
  verify_refused_again: number;
  longest_refusal_streak: number;
}

interface Sample {
  at: number;
  answered: number;
  inFlight: number;
}

const answeredOf = (s: QuotaStats) => Object.values(s.verify_outcomes).reduce((a, b) => a + b, 0);

/** Polls `/stats` every 250 ms and the run's limit every second until `done` settles. */
async function watch(url: string, temporal: Client, output: string, done: Promise<number>) {
  const samples: Sample[] = [];
  const limits: { at: number; limit: number }[] = [];
  let over = false;
  void done.finally(() => (over = true));
  let firstRequestAt = NaN;
  const handle = temporal.workflow.getHandle(workflowIdForOutput(output));
  let nextQuery = 0;
  while (!over) {
    const stats = (await (await fetch(`${url}/stats`)).json()) as QuotaStats;
    const at = performance.now();
    if (Number.isNaN(firstRequestAt) && stats.requests.verify > 0) firstRequestAt = at;
    samples.push({ at, answered: answeredOf(stats), inFlight: stats.verify_in_flight });
    if (at >= nextQuery) {
      nextQuery = at + 1000;
      const p = await queryProgress(handle, 1000);
      if (p?.phase === 'verify') limits.push({ at, limit: p.effectiveConcurrency });
    }
    await sleep(250);
  }
  const final = (await (await fetch(`${url}/stats`)).json()) as QuotaStats;
  return { samples, limits, firstRequestAt, final };
}

const batchSize = (rpm: number) => (values['batch-size'] === 'auto' ? Math.max(1, Math.round(rpm / 6)) : Number(values['batch-size']));

/** One quota: its server, its run, its figures. */
async function measure(rpm: number, stateDir: string, temporal: Client): Promise<(string | number)[]> {
  const rows = Math.round(rpm * minutes);
  const data = await writeRunFiles(
    join(out, '..', 'data', `quota-${rows}-${values['response-bytes']}`),
    { rows, responseBytes: Number(values['response-bytes']), agents: 2 },
    true,
  );
  const dir = join(out, `rpm-${rpm}`);
  mkdirSync(dir, { recursive: true });
  const server = await startReferenceServerProc({
    latencyMs,
    logPath: join(dir, 'reference-server.log'),
    extraArgs: ['--rpm', String(rpm), '--latency-spread', String(spread)],
  });
  const output = join(dir, 'reverified.jsonl');
  const args = ['run', '--inputs', data.inputsPath, '--rollouts', data.rolloutsPath, '-o', output, '--config', data.configPath];
  args.push('--server', `${RESOURCES_SERVER}=${server.url}`, '--concurrency', values.concurrency, '--batch-size', String(batchSize(rpm)));
  args.push('--no-rejudge', '--disable-aggregation', '--overwrite');
  const run = spawnCli(args, { env: benchEnv(stateDir), logPath: join(dir, 'reverify-run.log') });
  const seen = await watch(server.url, temporal, output, run.exited);
  const code = await run.exited;
  await server.stop();
  if (code !== 0) throw new Error(`reverify run exited with ${code} (see ${join(dir, 'reverify-run.log')})`);
  return figures(rpm, rows, seen);
}

function figures(rpm: number, rows: number, seen: Awaited<ReturnType<typeof watch>>): (string | number)[] {
  const { samples, limits, firstRequestAt, final } = seen;
  const lastAnswer = samples.find((s) => s.answered === answeredOf(final)) ?? samples[samples.length - 1];
  const wholeMin = (lastAnswer.at - firstRequestAt) / 60_000;
  const half = firstRequestAt + (lastAnswer.at - firstRequestAt) / 2;
  // The second half up to 95 % of the rows: settled, without the run's last batches, which end with fewer rows than lanes.
  const end = samples.find((s) => s.answered >= 0.95 * rows) ?? lastAnswer;
  const second = samples.filter((s) => s.at >= half && s.at <= end.at);
  const secondMin = (second[second.length - 1].at - second[0].at) / 60_000;
  const secondRate = (second[second.length - 1].answered - second[0].answered) / secondMin;
  const settled = limits.filter((l) => l.at >= half).map((l) => l.limit);
  const fit = (rpm / 60) * (latencyMs / 1000) * Math.exp((spread * spread) / 2);
  const settledLimit = settled.length > 0 ? median(settled) : NaN;
  const meanInFlight = second.reduce((a, s) => a + s.inFlight, 0) / Math.max(1, second.length);
  process.stdout.write(
    `rpm ${rpm}: ${rows} rows, ${answeredOf(final)} answered, ${final.requests.verify} requests, ${final.verify_throttled} answered 429 ` +
      `(${final.verify_refused_again} refused again), limit in force by second: ${limits.map((l) => l.limit).join(' ')}\n`,
  );
  return [
    rpm,
    rows,
    fixed(answeredOf(final) / wholeMin),
    ratio(answeredOf(final) / wholeMin, rpm),
    fixed(secondRate),
    ratio(secondRate, rpm),
    final.verify_throttled,
    final.longest_refusal_streak,
    `${fixed(settledLimit)} (${Math.min(...settled)}–${Math.max(...settled)})`,
    fixed(meanInFlight, 1),
    fixed(fit, 1),
    ratio(settledLimit, fit),
  ];
}

runBench(async () => {
  process.stdout.write(`${machineLine()}\n`);
  process.stdout.write(
    `latency ${latencyMs} ms median, spread σ ${spread}; --concurrency ${values.concurrency} --batch-size ${quotas.map(batchSize).join(' / ')}; ${minutes} min of rows per quota\n`,
  );
  const stateDir = join(out, 'state');
  freshStateDir(stateDir);
  const dev = startDevServer(stateDir);
  const connection = await Connection.connect({ address: dev.address });
  const temporal = new Client({ connection });
  const lines: (string | number)[][] = [];
  try {
    for (const rpm of quotas) lines.push(await measure(rpm, stateDir, temporal));
  } finally {
    await connection.close();
    stopDevServer(stateDir);
  }
  const header = [
    'rpm',
    'rows',
    'rows/min',
    '/quota',
    '2nd half to 95 % rows/min',
    '/quota',
    '429s',
    'longest 429 run of a row',
    'settled limit (range)',
    'in flight',
    'fit',
    'limit/fit',
  ];
  process.stdout.write(`\n${table(header, lines)}\n`);
});
