/**
 * Start and end of `reverify run`, step by step:
 *
 *   npx tsx bench/startup.ts [--rows 20000] [--response-bytes 5000] [--repeat 3] [--out bench/out/startup] [--cpu-prof] [--node-args="FLAGS"]
 *
 * On one embedded Temporal dev server (its own state dir; a `--limit 200` run first, which also
 * makes the workflow bundle when `npm run build` did not), each repeat runs `reverify run` on a fresh reference server (latency 0)
 * with `REVERIFY_TRACE=1`, and prints: spawn → first `/verify` and last `/verify` answered → exit
 * (from the reference server's `GET /stats`, as throughput.ts), the plan activity's seconds (from
 * the run's history file), and the CLI's own steps (`reverify-trace` lines: ms since the process
 * started, its RSS and its CPU ms then), and the peak RSS (VmHWM) of the `reverify run` process (CLI and in-process worker).
 * Medians over the repeats at the end. With --cpu-prof, each measured `reverify run` writes V8 CPU
 * profiles of its threads to `<out>/runN/cpu-prof` (`npx tsx bench/profile-top.ts DIR` reads them).
 * `--node-args` passes node flags to the measured runs (to compare heap limits, say).
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseCount, RESOURCES_SERVER, writeRunFiles } from './lib/data.js';
import { benchEnv, freshStateDir, runBench, spawnCli, startDevServer, startReferenceServerProc } from './lib/procs.js';
import { fmtMiB, RssSampler } from './lib/rss.js';
import { median } from './lib/median.js';
import { VerifyWindow } from './lib/stats.js';
import { machineLine } from './lib/table.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    'response-bytes': { type: 'string', default: '5000' },
    repeat: { type: 'string', default: '3' },
    out: { type: 'string', default: 'bench/out/startup' },
    'cpu-prof': { type: 'boolean', default: false },
    /** Space-separated node flags for the measured `reverify run` processes (e.g. heap limits to compare). */
    'node-args': { type: 'string', default: '' },
  },
});

interface HistoryEvent {
  eventId: string;
  eventTime: string;
  eventType: string;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
  activityTaskCompletedEventAttributes?: { scheduledEventId?: string };
  activityTaskStartedEventAttributes?: { scheduledEventId?: string };
}

/** Seconds from each activity's start to its completion, by activity name (the first of each), from `<stem>_history.json`. */
function activitySeconds(historyPath: string): Map<string, number> {
  const h = JSON.parse(readFileSync(historyPath, 'utf8')) as { runs: { history: { events: HistoryEvent[] } }[] };
  const names = new Map<string, string>();
  const started = new Map<string, number>();
  const out = new Map<string, number>();
  for (const e of h.runs[0].history.events) {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name) names.set(e.eventId, name);
    const s = e.activityTaskStartedEventAttributes?.scheduledEventId;
    if (s) started.set(s, Date.parse(e.eventTime));
    const c = e.activityTaskCompletedEventAttributes?.scheduledEventId;
    if (c && started.has(c)) {
      const n = names.get(c)!;
      if (!out.has(n)) out.set(n, (Date.parse(e.eventTime) - started.get(c)!) / 1000);
    }
  }
  return out;
}

runBench(async () => {
  console.log(machineLine());
  const rows = parseCount('--rows', values.rows);
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  const data = await writeRunFiles(
    resolve('bench/out/data', `rows${rows}-resp${values['response-bytes']}-agents2`),
    { rows, responseBytes: parseCount('--response-bytes', values['response-bytes']), agents: 2 },
    true,
  );
  const stateDir = join(out, 'state');
  freshStateDir(stateDir);
  startDevServer(stateDir);
  const args = (output: string, url: string, extra: string[] = []) => [
    'run',
    ...['--inputs', data.inputsPath, '--rollouts', data.rolloutsPath, '-o', output, '--config', data.configPath],
    ...['--server', `${RESOURCES_SERVER}=${url}`, '--no-rejudge', '--disable-aggregation', '--overwrite', ...extra],
  ];
  const results: { startup: number; tail: number; plan: number; trace: Map<string, { ms: number; rss: string; cpu: string }> }[] = [];
  for (let i = 0; i <= Number(values.repeat); i++) {
    const warm = i === 0;
    const dir = join(out, warm ? 'warmup' : `run${i}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const ref = await startReferenceServerProc({ latencyMs: 0, logPath: join(dir, 'reference-server.log') });
    const target = warm ? Math.min(200, rows) : rows;
    const win = new VerifyWindow(ref.url, target, 10);
    try {
      const output = join(dir, 'reverified.jsonl');
      let stderr = '';
      const t0 = performance.now();
      const cli = spawnCli(args(output, ref.url, warm ? ['--limit', '200'] : []), {
        env: benchEnv(stateDir, { REVERIFY_TRACE: '1' }),
        logPath: join(dir, 'reverify-run.log'),
        nodeArgs: [
          ...(values['cpu-prof'] && !warm ? ['--cpu-prof', '--cpu-prof-dir', join(dir, 'cpu-prof')] : []),
          ...values['node-args'].split(' ').filter(Boolean),
        ],
        onStderr: (text) => (stderr += text),
      });
      const rss = new RssSampler(100);
      rss.watch('run', cli.pid);
      const code = await cli.exited;
      const tExit = performance.now();
      const peak = rss.stop().get('run')!;
      if (code !== 0) throw new Error(`reverify run exited with status ${code}: see ${join(dir, 'reverify-run.log')}`);
      const w = await win.result();
      if (warm) {
        console.log(`warm-up run (--limit 200; makes the workflow bundle unless npm run build did): ${((tExit - t0) / 1000).toFixed(1)} s`);
        continue;
      }
      const trace = new Map<string, { ms: number; rss: string; cpu: string }>();
      for (const m of stderr.matchAll(/^reverify-trace (\S+) (.+?)(?: rss=(\d+) heap=\d+ external=\d+)?(?: cpu=(\d+))?$/gm))
        trace.set(m[2], { ms: Number(m[1]), rss: m[3] ?? '?', cpu: m[4] ?? '?' });
      const plan = activitySeconds(join(dir, 'reverified_history.json')).get('planRun') ?? NaN;
      const r = { startup: (w.firstMs - t0) / 1000, tail: (tExit - w.lastMs) / 1000, plan, trace };
      results.push(r);
      console.log(
        `run ${i}: spawn → first /verify ${r.startup.toFixed(2)} s (±${(w.resolutionMs / 1000).toFixed(2)}), ` +
          `last answer → exit ${r.tail.toFixed(2)} s, plan activity ${plan.toFixed(2)} s, wall ${((tExit - t0) / 1000).toFixed(1)} s, ` +
          `peak RSS of the reverify run process ${fmtMiB(peak.hwmKiB)} MiB`,
      );
      console.log(
        `  CLI steps (ms since process start, RSS MiB, CPU ms of the process): ${[...trace].map(([k, v]) => `${k} ${v.ms.toFixed(0)} (${v.rss}, ${v.cpu})`).join(', ')}`,
      );
      console.log(`  first /verify at ${(w.firstMs - t0).toFixed(0)} ms, last answered at ${(w.lastMs - t0).toFixed(0)} ms after spawn`);
    } finally {
      await win.close();
      await ref.stop();
    }
  }
  console.log(
    `\nmedian of ${results.length}: spawn → first /verify ${median(results.map((r) => r.startup)).toFixed(2)} s, ` +
      `last answer → exit ${median(results.map((r) => r.tail)).toFixed(2)} s, plan activity ${median(results.map((r) => r.plan)).toFixed(2)} s ` +
      `(${rows} rows, ${values['response-bytes']} B responses)`,
  );
});
