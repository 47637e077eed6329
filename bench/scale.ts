/**
 * Does a run stay flat in memory and history as rows grow? (issue 4)
 *
 *   npx tsx bench/scale.ts [--sizes 1e4,1e5] [--response-bytes 2000] [--concurrency 64]
 *                          [--batch-size N] [--agents 2] [--max-activities 64] [--interval-ms 200]
 *                          [--worker-node-args=--max-old-space-size=256] [--no-aggregation] [--out bench/out/scale]
 *
 * For each size (1e6 is opt-in: `--sizes 1e4,1e5,1e6`), on a fresh embedded Temporal dev server
 * (its own state dir), against a fresh reference server at latency 0: starts a `reverify worker`,
 * then `reverify run --no-worker …`, and samples every 200 ms the VmRSS (keeping the peak) and
 * VmHWM of (i) the CLI process that started the run, (ii) the worker, (iii) the Temporal server,
 * (iv) the reference server. Then it walks the run's continue-as-new chain and reports its
 * generations, history events per 1,000 rows and the largest history of any run in it.
 * (Over 300 lines on purpose: one script, read top to bottom as it runs — options, each
 * measurement, the table; what other benches share lives in bench/lib/.)
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_BATCH_SIZE } from '../src/config/run-options.js';
import { workflowBundlePath } from '../src/temporal/workflow-bundle.js';
import { workflowIdForOutput } from '../src/temporal/workflow-id.js';
import { CpuSampler } from './lib/cpu.js';
import { mib, parseCount, RESOURCES_SERVER, writeRunFiles } from './lib/data.js';
import { continueAsNewChain, type ChainRun } from './lib/history.js';
import {
  benchEnv,
  freshStateDir,
  ROOT,
  runBench,
  spawnCli,
  startDevServer,
  startReferenceServerProc,
  stopDevServer,
  stopProcess,
  type Spawned,
} from './lib/procs.js';
import { fmtMiB, peakBetween, RssSampler, type RssPeak } from './lib/rss.js';
import { VerifyWindow } from './lib/stats.js';
import { fixed, machineLine, table } from './lib/table.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1e4,1e5' },
    'response-bytes': { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '64' },
    'batch-size': { type: 'string' },
    agents: { type: 'string', default: '2' },
    'max-activities': { type: 'string', default: '64' },
    'interval-ms': { type: 'string', default: '200' },
    'worker-node-args': { type: 'string', default: '' },
    /** Skip the aggregate phase (on by default: its memory counts too). */
    'no-aggregation': { type: 'boolean', default: false },
    out: { type: 'string', default: join(ROOT, 'bench', 'out', 'scale') },
  },
});

const PROCESSES = ['CLI (--no-worker)', 'worker', 'Temporal server', 'reference server'] as const;
type ProcessLabel = (typeof PROCESSES)[number];

interface SizeResult {
  rows: number;
  rowsPerSec: number;
  wallSec: number;
  rss: Map<string, RssPeak>;
  chain: ChainRun[];
  written: string;
  /** CPU µs per row between the first and the last /verify, by process label. */
  cpuUsPerRow: Map<string, number>;
  /** Peak VmRSS sampled from the first /verify to the end of the run (KiB), by process label. */
  runPeakKiB: Map<string, number>;
}

/** `1e4` → `1e4`, 20000 → `2e4` … for labels. */
function sizeLabel(n: number): string {
  const e = Math.floor(Math.log10(n));
  return n === 10 ** e ? `1e${e}` : String(n);
}

runBench(async () => {
  const sizes = values.sizes.split(',').map((s) => parseCount('--sizes', s.trim()));
  const responseBytes = parseCount('--response-bytes', values['response-bytes']);
  const concurrency = parseCount('--concurrency', values.concurrency);
  const agents = parseCount('--agents', values.agents);
  const maxActivities = parseCount('--max-activities', values['max-activities']);
  const intervalMs = parseCount('--interval-ms', values['interval-ms']);
  const batchSize = values['batch-size'] === undefined ? undefined : parseCount('--batch-size', values['batch-size']);
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });

  console.log(machineLine());
  console.log(
    `sizes ${sizes.map(sizeLabel).join(', ')}, response ~${responseBytes} B, concurrency ${concurrency}, ` +
      `--batch-size ${batchSize ?? `${DEFAULT_BATCH_SIZE} (reverify default)`}, worker --max-activities ${maxActivities}, RSS sampled every ${intervalMs} ms`,
  );

  // Workers start from a cached workflow bundle, as they do after a user's first run: build it once
  // here and copy it into each fresh state dir, so webpack does not inflate the worker's peak.
  const bundleCache = join(out, 'bundle-cache');
  const tBundle = performance.now();
  await workflowBundlePath(bundleCache);
  console.log(`workflow bundle cache: ${bundleCache} (${((performance.now() - tBundle) / 1000).toFixed(1)} s)`);

  const results: SizeResult[] = [];
  for (const rows of sizes) {
    const label = sizeLabel(rows);
    const data = await writeRunFiles(
      join(ROOT, 'bench', 'out', 'data', `rows${rows}-resp${responseBytes}-agents${agents}`),
      { rows, responseBytes, agents },
      true,
    );
    console.log(
      `\n[${label}] data ${data.dir} (${data.reused ? 'reused' : `written in ${data.seconds.toFixed(1)} s`}): ` +
        `inputs ${mib(data.inputsBytes)}, rollouts ${mib(data.rolloutsBytes)}`,
    );
    const dir = join(out, label);
    rmSync(join(dir, 'run'), { recursive: true, force: true });
    mkdirSync(join(dir, 'run'), { recursive: true });
    const stateDir = join(dir, 'state');
    freshStateDir(stateDir);
    mkdirSync(stateDir, { recursive: true });
    if (existsSync(join(bundleCache, 'bundles'))) cpSync(join(bundleCache, 'bundles'), join(stateDir, 'bundles'), { recursive: true });
    const server = startDevServer(stateDir);
    const env = benchEnv(stateDir);
    const rss = new RssSampler(intervalMs);
    const cpu = new CpuSampler(intervalMs);
    const watch = (label: ProcessLabel, pid: number) => {
      rss.watch(label, pid);
      cpu.watch(label, pid);
    };
    const procs: Spawned[] = [];
    try {
      watch('Temporal server', server.pid);
      const ref = await startReferenceServerProc({ latencyMs: 0, logPath: join(dir, 'reference-server.log') });
      procs.push(ref);
      watch('reference server', ref.pid);
      const worker = spawnCli(['worker', '--max-activities', String(maxActivities)], {
        env,
        logPath: join(dir, 'worker.log'),
        nodeArgs: values['worker-node-args'].split(' ').filter(Boolean),
      });
      procs.push(worker);
      watch('worker', worker.pid);

      const output = join(dir, 'run', 'reverified.jsonl');
      const args = [
        'run',
        '--inputs',
        data.inputsPath,
        '--rollouts',
        data.rolloutsPath,
        '-o',
        output,
        '--config',
        data.configPath,
        '--server',
        `${RESOURCES_SERVER}=${ref.url}`,
        '--concurrency',
        String(concurrency),
        '--no-rejudge',
        '--overwrite',
        '--no-worker',
        ...(values['no-aggregation'] ? ['--disable-aggregation'] : []),
        ...(batchSize === undefined ? [] : ['--batch-size', String(batchSize)]),
      ];
      const win = new VerifyWindow(ref.url, rows, 50);
      const t0 = performance.now();
      const cli = spawnCli(args, { env, logPath: join(dir, 'reverify-run.log') });
      watch('CLI (--no-worker)', cli.pid);
      const heartbeat = setInterval(() => {
        const w = rss.get('worker');
        process.stdout.write(
          `  … ${((performance.now() - t0) / 1000).toFixed(0)} s, worker RSS ${w ? fmtMiB(w.peakRssKiB) : '?'} MiB peak\n`,
        );
      }, 30_000);
      const code = await cli.exited.finally(() => clearInterval(heartbeat));
      const wallSec = (performance.now() - t0) / 1000;
      if (code !== 0) throw new Error(`reverify run exited with status ${code}: see ${join(dir, 'reverify-run.log')}`);
      const w = await Promise.race([
        win.result(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the run ended before every row was answered')), 5_000)),
      ]);
      await win.close();
      const peaks = rss.stop();
      cpu.sample();
      cpu.stop();
      const cpuUsPerRow = new Map([...cpu.between(w.firstMs, w.lastMs)].map(([l, u]) => [l, (1000 * u.totalMs) / rows]));
      const tEnd = t0 + wallSec * 1000;
      const runPeakKiB = new Map([...peaks].map(([l, p]) => [l, peakBetween(p, w.firstMs, tEnd)]));
      const summary = /(?:Rows|Rollouts): .*/.exec(readFileSync(join(dir, 'reverify-run.log'), 'utf8'))?.[0] ?? '';
      const chain = await continueAsNewChain(server.address, 'default', workflowIdForOutput(output));
      const result: SizeResult = {
        rows,
        rowsPerSec: rows / ((w.lastMs - w.firstMs) / 1000),
        wallSec,
        rss: peaks,
        chain,
        written: summary,
        cpuUsPerRow,
        runPeakKiB,
      };
      results.push(result);
      const events = chain.reduce((a, r) => a + r.historyLength, 0);
      console.log(`[${label}] ${summary}`);
      console.log(
        `[${label}] ${fixed(result.rowsPerSec)} rows/s first→last /verify, wall ${wallSec.toFixed(1)} s ` +
          `(first /verify ${((w.firstMs - t0) / 1000).toFixed(1)} s after the run command started: guard, plan); ` +
          `${chain.length} run(s) in the chain (${chain.length - 1} continue-as-new), ${events} history events, ` +
          `largest history ${fixed(Math.max(...chain.map((r) => r.historySize ?? NaN)) / 1024)} KiB`,
      );
      // The RSS series, for inspection, and where the worker and the Temporal server stood along the run.
      const csv = ['process,seconds_since_run_start,vmrss_kib'];
      for (const [l, p] of peaks) for (const x of p.series) csv.push(`${l},${((x.atMs - t0) / 1000).toFixed(2)},${x.rssKiB}`);
      writeFileSync(join(dir, 'rss.csv'), csv.join('\n') + '\n');
      for (const l of ['worker', 'Temporal server'] as const) {
        const p = peaks.get(l);
        if (!p) continue;
        const span = w.lastMs - w.firstMs;
        const at = [0.25, 0.5, 0.75, 1].map((q) => {
          const upTo = w.firstMs + q * span;
          return `${q * 100}%: ${fmtMiB(peakBetween(p, w.firstMs, upTo))}`;
        });
        console.log(`    ${l} peak VmRSS up to each quarter of the rows (MiB): ${at.join(', ')}`);
      }
      const workerRss = peaks.get('worker');
      if (workerRss) {
        const phases = [
          ['start → first /verify (guard, plan)', t0, w.firstMs],
          ['first → last /verify (verify, commit)', w.firstMs, w.lastMs],
          ['last /verify → exit (last commits, aggregate)', w.lastMs, tEnd],
        ] as const;
        console.log(
          `    worker peak VmRSS by phase (MiB): ${phases.map(([n, a, b]) => `${n}: ${fmtMiB(peakBetween(workerRss, a, b))}`).join('; ')}`,
        );
      }
      for (const label of PROCESSES) {
        const p = peaks.get(label);
        if (p) {
          console.log(
            `    ${label.padEnd(18)} pid ${p.pid}: peak VmRSS ${fmtMiB(p.peakRssKiB)} MiB (${fmtMiB(runPeakKiB.get(label) ?? NaN)} MiB ` +
              `from the first /verify on), VmHWM ${fmtMiB(p.hwmKiB)} MiB (${p.samples} samples); ` +
              `CPU ${fixed(cpuUsPerRow.get(label) ?? NaN)} µs/row first→last /verify`,
          );
        }
      }
    } finally {
      rss.stop();
      cpu.stop();
      for (const p of procs.reverse()) await stopProcess(p);
      stopDevServer(stateDir);
    }
  }

  console.log('');
  console.log(
    `peak RSS in MiB: the largest VmRSS sampled every ${intervalMs} ms over the process's life, [its VmHWM]; ` +
      'history events per 1,000 rows over the whole chain',
  );
  const rssCell = (r: SizeResult, label: ProcessLabel) => {
    const p = r.rss.get(label);
    return p ? `${fmtMiB(p.peakRssKiB)} [${fmtMiB(p.hwmKiB)}]` : '-';
  };
  console.log(
    table(
      [
        'rows',
        'rows/s',
        'wall s',
        ...PROCESSES.map((p) => `${p} MiB`),
        'runs',
        'CAN',
        'events/1k rows',
        'max history KiB',
        'worker CPU µs/row',
      ],
      results.map((r) => [
        sizeLabel(r.rows),
        fixed(r.rowsPerSec),
        fixed(r.wallSec, 1),
        ...PROCESSES.map((p) => rssCell(r, p)),
        String(r.chain.length),
        String(r.chain.length - 1),
        fixed((1000 * r.chain.reduce((a, c) => a + c.historyLength, 0)) / r.rows, 1),
        fixed(Math.max(...r.chain.map((c) => c.historySize ?? NaN)) / 1024, 1),
        fixed(r.cpuUsPerRow.get('worker') ?? NaN),
      ]),
    ),
  );

  if (results.length > 1) {
    console.log('');
    console.log(
      "Is peak RSS flat in the number of rows? Ratio of each size's VmHWM (the kernel's exact peak) to the previous size's; " +
        '≤ 1.25 counts as flat (in brackets: the same ratio of the peak sampled from the first /verify on)',
    );
    const rowsRatio = results.slice(1).map((r, i) => `${sizeLabel(r.rows)}/${sizeLabel(results[i].rows)}`);
    console.log(
      table(
        ['process', ...rowsRatio, 'verdict'],
        PROCESSES.map((label) => {
          const hwm = (r: SizeResult) => r.rss.get(label)?.hwmKiB || r.rss.get(label)?.peakRssKiB || NaN;
          const ratios = results.slice(1).map((r, i) => hwm(r) / hwm(results[i]));
          const runRatios = results.slice(1).map((r, i) => (r.runPeakKiB.get(label) ?? NaN) / (results[i].runPeakKiB.get(label) ?? NaN));
          const flat = ratios.every((x) => x <= 1.25);
          return [
            label,
            ...ratios.map((x, i) => `${fixed(x, 2)} (${fixed(runRatios[i], 2)})`),
            flat ? 'flat' : `grows (×${fixed(Math.max(...ratios), 2)})`,
          ];
        }),
      ),
    );
  }
  console.log(`outputs and logs left for inspection under ${out}`);
});
