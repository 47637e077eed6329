/**
 * Throughput of `reverify run` against what the resources server can take and against a naive loop,
 * in one run, at each verifier latency (issue 4):
 *
 *   npx tsx bench/throughput.ts [--rows 20000] [--response-bytes 5000] [--latencies 0,20]
 *                               [--concurrency 64] [--batch-size N] [--workers N] [--agents 2] [--repeat 1]
 *                               [--only a,b,c] [--cpu-prof] [--node-args="FLAGS"] [--no-warmup] [--out bench/out/throughput]
 *                               [--compare 'COMMAND with {inputs} {rollouts} {out} {config} {server} {url} {concurrency}']
 *
 * (a) capacity: a plain undici Pool (keep-alive, `concurrency` connections, no Temporal) sending the
 *     payloads reverify would build (joined rows, `buildPayload`), prebuilt in memory; with
 *     `--rejudge`, each judge failure again after its round's delay, as reverify does;
 * (b) reverify: `node bin/reverify.js run … --concurrency C --no-rejudge --disable-aggregation
 *     --overwrite` as a user runs it, on an embedded Temporal dev server with its own state dir;
 * (c) naive: stream the rollouts, Map lookup, `fetch` with C in flight, append to a file.
 * (d) with --compare: another implementation's command line (e.g. another checkout of reverify) on
 *     the same data, server and Temporal dev server, timed and sampled exactly as (b).
 * Each measurement gets a fresh reference server in its own process; rows/s are timed from the
 * first `/verify` the server saw to the last one it answered (its `/stats`, polled). Numbers are
 * machine-dependent: read the ratios. With `--repeat N` every measurement is taken N times
 * (interleaved a, b, c) and the table shows medians.
 * (Over 300 lines on purpose: one script, read top to bottom as it runs — options, each
 * measurement, the table; what other benches share lives in bench/lib/.)
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_REJUDGE_DELAY_MS, rejudgeDelayMs } from '../src/config/run-defaults.js';
import { DEFAULT_BATCH_SIZE } from '../src/config/run-options.js';
import { DEFAULT_MAX_ATTEMPTS } from '../src/contract/keys.js';
import { driveCapacity, naiveLoop, prebuildPayloads } from './lib/clients.js';
import { describeProfiles, monotonicUs } from './lib/cpuprofile.js';
import { mib, parseCount, RESOURCES_SERVER, type RunFiles, writeRunFiles } from './lib/data.js';
import { CpuSampler, describeCpu } from './lib/cpu.js';
import {
  benchEnv,
  freshStateDir,
  readDevServerRecord,
  ROOT,
  runBench,
  spawnCli,
  spawnShell,
  startDevServer,
  startReferenceServerProc,
  stopDevServer,
} from './lib/procs.js';
import { median } from './lib/median.js';
import { describeInFlight, VerifyWindow, type WindowResult } from './lib/stats.js';
import { fixed, machineLine, ratio, table } from './lib/table.js';

/** reverify's own default (docs/usage.md: `--batch-size N`). */
const REVERIFY_DEFAULT_BATCH_SIZE = DEFAULT_BATCH_SIZE;
/** Most distinct payloads (a) keeps in memory; it cycles through them beyond that. */
const MAX_PREBUILT = 50_000;

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    'response-bytes': { type: 'string', default: '5000' },
    latencies: { type: 'string', default: '0,20' },
    /** The reference server's `--latency-spread` (σ of a log-normal delay around each latency). */
    'latency-spread': { type: 'string', default: '0' },
    /** The reference server's `--judge-fail-rate` (share of /verify answered as judge failures). */
    'judge-fail-rate': { type: 'string', default: '0' },
    /** The reference server's `--seed`: another seed draws other latencies and failures in the same arrival order. */
    'server-seed': { type: 'string', default: '1' },
    /** (b) and (d) re-judge (reverify's default) instead of `--no-rejudge`, and (a) re-judges as they do (each judge failure again after 3 s, then 6 s, 3 attempts): their rates count every request, re-judgments included. */
    rejudge: { type: 'boolean', default: false },
    concurrency: { type: 'string', default: '64' },
    'batch-size': { type: 'string' },
    workers: { type: 'string' },
    agents: { type: 'string', default: '2' },
    repeat: { type: 'string', default: '1' },
    only: { type: 'string', default: 'a,b,c' },
    'cpu-prof': { type: 'boolean', default: false },
    /** Space-separated node flags for the (b) `reverify run` processes (e.g. heap limits to compare). */
    'node-args': { type: 'string', default: '' },
    'no-warmup': { type: 'boolean', default: false },
    compare: { type: 'string' },
    out: { type: 'string', default: join(ROOT, 'bench', 'out', 'throughput') },
  },
});

interface Measured {
  rowsPerSec: number;
  window: WindowResult;
  /** CPU used by each process between the first and the last /verify (one line each). */
  cpu: string[];
  /** The same, in CPU µs per row, by process label. */
  cpuUsPerRow: Record<string, number>;
}

function cpuOf(cpu: CpuSampler, w: WindowResult, rows: number): Pick<Measured, 'cpu' | 'cpuUsPerRow'> {
  cpu.sample();
  const used = [...cpu.between(w.firstMs, w.lastMs)];
  return {
    cpu: used.map(([label, u]) => describeCpu(label, u, rows)),
    cpuUsPerRow: Object.fromEntries(used.map(([label, u]) => [label, (1000 * u.totalMs) / rows])),
  };
}

interface ReverifyMeasured extends Measured {
  wallSec: number;
  startupSec: number;
  tailSec: number;
  /** rows / (command wall time minus its startup, i.e. exit minus the first /verify). */
  rowsPerSecAfterStartup: number;
  rowsPerSecWall: number;
}

function countLines(path: string): number {
  if (!existsSync(path)) return 0;
  const buf = readFileSync(path);
  let n = 0;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) n++;
  return n;
}

function printCpu(m: Measured): void {
  for (const line of m.cpu) console.log(`    CPU first→last /verify: ${line}`);
}

/** The reference servers' spread of latencies, and the mean latency's ratio to the median (e^(σ²/2)). */
const spread = Number(values['latency-spread']);
if (!(spread >= 0 && spread <= 4))
  throw new Error(`--latency-spread must be a number from 0 to 4 (the reference server's), got ${values['latency-spread']}`);
const spreadMean = Math.exp((spread * spread) / 2);
/** The reference servers' flags besides the latency. */
const judgeFailRate = Number(values['judge-fail-rate']);
if (!(judgeFailRate >= 0 && judgeFailRate <= 1))
  throw new Error(`--judge-fail-rate must be a share from 0 to 1, got ${values['judge-fail-rate']}`);
const serverSeed = Number(values['server-seed']);
if (!Number.isInteger(serverSeed)) throw new Error(`--server-seed must be an integer, got ${values['server-seed']}`);
const serverArgs = [
  '--seed',
  String(serverSeed),
  ...(spread > 0 ? ['--latency-spread', String(spread)] : []),
  ...(judgeFailRate > 0 ? ['--judge-fail-rate', String(judgeFailRate)] : []),
];

const windowSec = (w: WindowResult) => (w.lastMs - w.firstMs) / 1000;
const pm = (w: WindowResult) => `±${fixed(w.resolutionMs)} ms`;

runBench(async () => {
  const rows = parseCount('--rows', values.rows);
  const responseBytes = parseCount('--response-bytes', values['response-bytes']);
  const concurrency = parseCount('--concurrency', values.concurrency);
  const repeat = parseCount('--repeat', values.repeat);
  const latencies = values.latencies.split(',').map((s) => {
    const n = Number(s);
    if (s.trim() === '' || !Number.isFinite(n) || n < 0) throw new RangeError(`--latencies takes comma-separated milliseconds, got '${s}'`);
    return n;
  });
  const batchSize = values['batch-size'] === undefined ? undefined : parseCount('--batch-size', values['batch-size']);
  const workers = values.workers === undefined ? undefined : parseCount('--workers', values.workers);
  const only = new Set(values.only.split(',').map((s) => s.trim()));
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  const batchLabel = `${batchSize ?? `${REVERIFY_DEFAULT_BATCH_SIZE} (reverify default)`}`;
  /** The flags of (b) that the script's options set, as printed. */
  const runFlags = `--batch-size ${batchLabel}${workers === undefined ? '' : `, --workers ${workers}`}`;

  console.log(machineLine());
  console.log(
    `rows ${rows}, response ~${responseBytes} B, concurrency ${concurrency}, latencies ${latencies.join(', ')} ms, ` +
      `${runFlags}, measuring ${[...only].join(',')}, repeat ${repeat}`,
  );
  const data = await writeRunFiles(
    join(ROOT, 'bench', 'out', 'data', `rows${rows}-resp${responseBytes}-agents${values.agents}`),
    { rows, responseBytes, agents: parseCount('--agents', values.agents) },
    true,
  );
  console.log(
    `data: ${data.dir} (${data.reused ? 'reused' : `written in ${data.seconds.toFixed(1)} s`}): ` +
      `inputs ${mib(data.inputsBytes)}, rollouts ${mib(data.rolloutsBytes)} (${Math.round(data.rolloutsBytes / rows)} B/row)`,
  );

  let payloads: string[] = [];
  if (only.has('a')) {
    const t0 = performance.now();
    const built = await prebuildPayloads(data.inputsPath, data.rolloutsPath, Math.min(rows, MAX_PREBUILT));
    payloads = built.payloads;
    console.log(
      `(a) payloads prebuilt with buildPayload: ${payloads.length} (${mib(built.bytes)}, ` +
        `${Math.round(built.bytes / payloads.length)} B each) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  }

  const stateDir = join(out, 'state');
  const reverifyArgs = (output: string, url: string, extra: string[] = []) => [
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
    `${RESOURCES_SERVER}=${url}`,
    '--concurrency',
    String(concurrency),
    ...(values.rejudge ? [] : ['--no-rejudge']),
    '--disable-aggregation',
    '--overwrite',
    ...(batchSize === undefined ? [] : ['--batch-size', String(batchSize)]),
    ...(workers === undefined ? [] : ['--workers', String(workers)]),
    ...extra,
  ];
  const compare = values.compare;
  if (only.has('b') || compare !== undefined) {
    // A state dir of our own: stop whatever a previous (crashed) bench left on it, then start clean.
    freshStateDir(stateDir);
    const server = startDevServer(stateDir);
    console.log(`Temporal dev server: ${server.address} (pid ${server.pid}), state dir ${stateDir}`);
    if (!values['no-warmup']) await warmUp(out, stateDir, reverifyArgs, data);
  }

  const results = latencies.map((latency) => ({
    latency,
    a: [] as Measured[],
    b: [] as ReverifyMeasured[],
    c: [] as Measured[],
    d: [] as ReverifyMeasured[],
  }));
  for (const [i, r] of results.entries()) {
    // Output names: b-L20, or b-L20-2 for a repeated latency or a repetition.
    const dup = latencies.indexOf(r.latency) !== i ? `-x${i + 1}` : '';
    for (let rep = 1; rep <= repeat; rep++) {
      const tag = `L${r.latency}${dup}${repeat > 1 ? `-${rep}` : ''}`;
      const head = `[L=${r.latency} ms${repeat > 1 ? ` #${rep}` : ''}]`;
      if (only.has('a')) {
        const m = await measureCapacity(r.latency, join(out, `a-${tag}.reference-server.log`), payloads, rows, concurrency);
        r.a.push(m);
        console.log(`${head} (a) capacity: ${fixed(m.rowsPerSec)} rows/s (${pm(m.window)}; ${m.note}, ${describeInFlight(m.window)})`);
        printCpu(m);
      }
      if (only.has('b')) {
        const runDir = join(out, `b-${tag}`);
        const m = await measureReverify(r.latency, runDir, stateDir, reverifyArgs, rows);
        r.b.push(m);
        console.log(
          `${head} (b) reverify: ${fixed(m.rowsPerSec)} rows/s first→last /verify (${pm(m.window)}); ${fixed(m.rowsPerSecAfterStartup)} rows/s ` +
            `wall−startup; wall ${m.wallSec.toFixed(1)} s = startup ${m.startupSec.toFixed(1)} s + verify ${windowSec(m.window).toFixed(1)} s ` +
            `+ tail ${m.tailSec.toFixed(1)} s; ${m.note}; ${describeInFlight(m.window)}` +
            (m.window.peakInFlight > concurrency ? ` (EXCEEDS --concurrency ${concurrency})` : ''),
        );
        printCpu(m);
        const profDir = join(runDir, 'cpu-prof');
        if (values['cpu-prof'] && existsSync(profDir)) {
          const files = readdirSync(profDir)
            .filter((f) => f.endsWith('.cpuprofile'))
            .map((f) => join(profDir, f));
          const window = { startUs: monotonicUs(m.window.firstMs), endUs: monotonicUs(m.window.lastMs) };
          console.log(
            `\nCPU profile of the \`reverify run\` process (CLI + in-process worker) from the first /verify to the last, ${profDir}:\n` +
              `${describeProfiles(files, 25, window)}\n`,
          );
        }
      }
      if (compare !== undefined) {
        const runDir = join(out, `d-${tag}`);
        const m = await measureCompared(r.latency, runDir, stateDir, compare, data, concurrency, rows);
        r.d.push(m);
        console.log(
          `${head} (d) compared: ${fixed(m.rowsPerSec)} rows/s first→last /verify (${pm(m.window)}); wall ${m.wallSec.toFixed(1)} s = ` +
            `startup ${m.startupSec.toFixed(1)} s + verify ${windowSec(m.window).toFixed(1)} s + tail ${m.tailSec.toFixed(1)} s; ${m.note}; ` +
            `${describeInFlight(m.window)}` +
            (m.window.peakInFlight > concurrency ? ` (EXCEEDS --concurrency ${concurrency})` : ''),
        );
        printCpu(m);
      }
      if (only.has('c')) {
        const m = await measureNaive(r.latency, out, tag, data, rows, concurrency);
        r.c.push(m);
        console.log(`${head} (c) naive loop: ${fixed(m.rowsPerSec)} rows/s (${pm(m.window)}; ${m.note}, ${describeInFlight(m.window)})`);
        printCpu(m);
      }
    }
  }

  if (only.has('b') || compare !== undefined) stopDevServer(stateDir);

  const med = (ms: Measured[], f: (m: Measured) => number = (m) => m.rowsPerSec) => median(ms.map(f));
  const medB = (ms: ReverifyMeasured[], f: (m: ReverifyMeasured) => number) => median(ms.map(f));
  /** Mean / peak `/verify` requests in flight over the repeats (the mean's median, the peak's maximum). */
  const inFlight = (ms: ReverifyMeasured[]) =>
    ms.length > 0
      ? `${fixed(
          medB(ms, (m) => m.window.meanInFlight),
          1,
        )} (whole ${fixed(
          medB(ms, (m) => m.window.wholeMeanInFlight),
          1,
        )}) / ${Math.max(...ms.map((m) => m.window.peakInFlight))}`
      : '-';
  console.log('');
  console.log(
    `rows/s${repeat > 1 ? ` (median of ${repeat})` : ''}, timed from the first /verify the reference server received to the last it ` +
      `answered; rows ${rows}, response ~${responseBytes} B, concurrency ${concurrency}, ${runFlags}` +
      (spread > 0 ? `; latencies log-normal around L (--latency-spread ${spread}: mean L × ${fixed(spreadMean, 2)})` : ''),
  );
  console.log(
    table(
      [
        'latency',
        '(a) capacity',
        '(b) reverify',
        '(b) wall−startup',
        '(b) wall',
        '(c) naive',
        'b/a',
        'b/c',
        '(b) startup s',
        '(b) tail s',
        '(b) in flight mean (whole)/peak',
        'CPU µs/row: (b) reverify',
        '(b) Temporal',
        '(b) ref server',
        '(a) ref server',
      ],
      results.map((r) => {
        const a = med(r.a);
        const b = medB(r.b, (m) => m.rowsPerSec);
        const c = med(r.c);
        return [
          `${r.latency} ms`,
          fixed(a),
          fixed(b),
          fixed(medB(r.b, (m) => m.rowsPerSecAfterStartup)),
          fixed(medB(r.b, (m) => m.rowsPerSecWall)),
          fixed(c),
          ratio(b, a),
          ratio(b, c),
          fixed(
            medB(r.b, (m) => m.startupSec),
            1,
          ),
          fixed(
            medB(r.b, (m) => m.tailSec),
            1,
          ),
          inFlight(r.b),
          fixed(medB(r.b, (m) => m.cpuUsPerRow['reverify run'] ?? NaN)),
          fixed(medB(r.b, (m) => m.cpuUsPerRow['Temporal server'] ?? NaN)),
          fixed(medB(r.b, (m) => m.cpuUsPerRow['reference server'] ?? NaN)),
          fixed(med(r.a, (m) => m.cpuUsPerRow['reference server'] ?? NaN)),
        ];
      }),
    ),
  );
  const positive = latencies.filter((l) => l > 0);
  if (positive.length > 0) {
    console.log(
      `(ceiling at latency L: concurrency / ${spread > 0 ? 'mean latency' : 'L'} = ${positive.map((l) => `${fixed((concurrency * 1000) / (l * spreadMean))} rows/s at ${l} ms`).join(', ')})`,
    );
  }
  if (compare !== undefined) {
    console.log(`\n(d) compared: ${compare}`);
    console.log(
      table(
        ['latency', '(b) reverify', '(d) compared', 'b/d', '(d) in flight mean/peak', 'CPU µs/row: (b) reverify', '(d) compared'],
        results.map((r) => [
          `${r.latency} ms`,
          fixed(medB(r.b, (m) => m.rowsPerSec)),
          fixed(medB(r.d, (m) => m.rowsPerSec)),
          ratio(
            medB(r.b, (m) => m.rowsPerSec),
            medB(r.d, (m) => m.rowsPerSec),
          ),
          inFlight(r.d),
          fixed(medB(r.b, (m) => m.cpuUsPerRow['reverify run'] ?? NaN)),
          fixed(medB(r.d, (m) => m.cpuUsPerRow['compared'] ?? NaN)),
        ]),
      ),
    );
  }
  console.log(`outputs left for inspection under ${out}`);
});

/**
 * (d): another implementation's command line against a fresh reference server, timed as (b). The
 * placeholders are replaced by this run's files and server; the environment is (b)'s, so a reverify
 * checkout uses the bench's Temporal dev server (REVERIFY_STATE_DIR).
 */
async function measureCompared(
  latency: number,
  runDir: string,
  stateDir: string,
  template: string,
  data: RunFiles,
  concurrency: number,
  rows: number,
): Promise<ReverifyMeasured & { note: string }> {
  const m = await measureCommand(
    { latency, runDir, stateDir, rows, label: 'compared', what: 'the compared command', log: 'command.log' },
    (output, url, logPath) => {
      const fill: Record<string, string> = {
        inputs: data.inputsPath,
        rollouts: data.rolloutsPath,
        config: data.configPath,
        out: output,
        url,
        server: `${RESOURCES_SERVER}=${url}`,
        concurrency: String(concurrency),
      };
      const command = template.replace(/\{(\w+)\}/g, (all, name: string) => fill[name] ?? all);
      return spawnShell(command, { env: benchEnv(stateDir), logPath });
    },
  );
  return { ...m, note: `${m.written} rows written to {out} and its _failures sidecar` };
}

/** (a): the plain load generator against a fresh reference server. */
async function measureCapacity(
  latency: number,
  logPath: string,
  payloads: string[],
  rows: number,
  concurrency: number,
): Promise<Measured & { note: string }> {
  const ref = await startReferenceServerProc({ latencyMs: latency, logPath, extraArgs: serverArgs });
  const cpu = new CpuSampler();
  cpu.watch('reference server', ref.pid);
  cpu.watch('load generator (bench)', process.pid);
  // With --rejudge the load generator re-judges as reverify does (each failure again after its
  // round's delay, 3 s then 6 s, up to 3 attempts): the same requests, so the same latencies, which
  // the server draws in arrival order.
  const rejudging =
    values.rejudge && judgeFailRate > 0
      ? { maxAttempts: DEFAULT_MAX_ATTEMPTS, delayMs: (round: number) => rejudgeDelayMs(DEFAULT_REJUDGE_DELAY_MS, round) }
      : undefined;
  let sent = false;
  const win = new VerifyWindow(ref.url, rows, 25, { settled: () => sent });
  try {
    const run = await driveCapacity(ref.url, payloads, rows, concurrency, rejudging);
    sent = true;
    const w = await win.result();
    return {
      rowsPerSec: w.requests / windowSec(w),
      window: w,
      ...cpuOf(cpu, w, rows),
      note: `client-side ${fixed(run.requests / ((run.endMs - run.startMs) / 1000))} requests/s, ${run.requests} requests${rejudging ? ' (judge failures re-judged as reverify does)' : ''}, ${run.non200} non-200`,
    };
  } finally {
    cpu.stop();
    await win.close();
    await ref.stop();
  }
}

/** Builds the workflow bundle into the state dir's cache, so that (b)'s startup is a user's usual one. */
async function warmUp(
  out: string,
  stateDir: string,
  reverifyArgs: (output: string, url: string, extra?: string[]) => string[],
  data: RunFiles,
): Promise<void> {
  const dir = join(out, 'warmup');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // No judge failures here: the warm-up only builds the bundle.
  const ref = await startReferenceServerProc({
    latencyMs: 0,
    logPath: join(dir, 'reference-server.log'),
    extraArgs: serverArgs.slice(0, spread > 0 ? 2 : 0),
  });
  try {
    const t0 = performance.now();
    const cli = spawnCli(reverifyArgs(join(dir, 'reverified.jsonl'), ref.url, ['--limit', String(Math.min(200, data.rows))]), {
      env: benchEnv(stateDir),
      logPath: join(dir, 'reverify-run.log'),
    });
    const code = await cli.exited;
    if (code !== 0) throw new Error(`warm-up reverify run exited with status ${code}: see ${join(dir, 'reverify-run.log')}`);
    console.log(`warm-up run (--limit 200; builds the workflow bundle cache): ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    await ref.stop();
  }
}

/**
 * Waits for a measured process to exit (a non-zero status fails the bench, naming its log), then
 * for the reference server to have answered every row, and gives the run's rates and CPU.
 */
async function timedToExit(
  what: string,
  proc: { exited: Promise<number> },
  logPath: string,
  m: { t0: number; win: VerifyWindow; cpu: CpuSampler; rows: number },
): Promise<ReverifyMeasured> {
  const code = await proc.exited;
  const tExit = performance.now();
  // With judge failures, 3: rows still judge-failed (at the attempt cap, or not re-judged: docs/usage.md, exit statuses).
  if (code !== 0 && !(judgeFailRate > 0 && code === 3)) throw new Error(`${what} exited with status ${code}: see ${logPath}`);
  const w = await Promise.race([
    m.win.result(),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} ended before the reference server had answered every row`)), 5_000),
    ),
  ]);
  // Every request the server answered: the rows, and with --rejudge the re-judged ones again.
  const answered = Math.max(m.rows, w.requests);
  return {
    rowsPerSec: answered / windowSec(w),
    rowsPerSecAfterStartup: answered / ((tExit - w.firstMs) / 1000),
    rowsPerSecWall: answered / ((tExit - m.t0) / 1000),
    wallSec: (tExit - m.t0) / 1000,
    startupSec: (w.firstMs - m.t0) / 1000,
    tailSec: (tExit - w.lastMs) / 1000,
    window: w,
    ...cpuOf(m.cpu, w, m.rows),
  };
}

/** (b): `reverify run` as a subprocess against a fresh reference server. */
async function measureReverify(
  latency: number,
  runDir: string,
  stateDir: string,
  reverifyArgs: (output: string, url: string, extra?: string[]) => string[],
  rows: number,
): Promise<ReverifyMeasured & { note: string }> {
  const nodeArgs = [
    ...(values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', join(runDir, 'cpu-prof')] : []),
    ...values['node-args'].split(' ').filter(Boolean),
  ];
  const m = await measureCommand(
    { latency, runDir, stateDir, rows, label: 'reverify run', what: 'reverify run', log: 'reverify-run.log' },
    (output, url, logPath) => spawnCli(reverifyArgs(output, url), { env: benchEnv(stateDir), logPath, nodeArgs }),
  );
  return { ...m, note: `${m.written} rows written${m.written === rows ? '' : ` (EXPECTED ${rows})`}` };
}

/**
 * (b) and (d): a command spawned against a fresh reference server in a fresh `runDir`, writing
 * `runDir/reverified.jsonl` (and its sidecar); timed to its exit (`timedToExit`), its CPU sampled as
 * `label` beside the Temporal and reference servers'; `written` counts the rows of both files.
 */
async function measureCommand(
  o: { latency: number; runDir: string; stateDir: string; rows: number; label: string; what: string; log: string },
  spawnIt: (output: string, url: string, logPath: string) => { pid: number; exited: Promise<number> },
): Promise<ReverifyMeasured & { written: number }> {
  rmSync(o.runDir, { recursive: true, force: true });
  mkdirSync(o.runDir, { recursive: true });
  const ref = await startReferenceServerProc({
    latencyMs: o.latency,
    logPath: join(o.runDir, 'reference-server.log'),
    extraArgs: serverArgs,
  });
  const output = join(o.runDir, 'reverified.jsonl');
  const logPath = join(o.runDir, o.log);
  // With re-judgment rounds, the last answer is the one before the command exits.
  let exited = false;
  const win = new VerifyWindow(ref.url, o.rows, 25, { settled: () => exited });
  const cpu = new CpuSampler();
  try {
    const t0 = performance.now();
    const spawned = spawnIt(output, ref.url, logPath);
    const proc = { ...spawned, exited: spawned.exited.finally(() => (exited = true)) };
    // The command and every process it starts (`--workers N`'s workers).
    cpu.watch(o.label, proc.pid, { tree: true });
    cpu.watch('Temporal server', readDevServerRecord(o.stateDir).pid);
    cpu.watch('reference server', ref.pid);
    const m = await timedToExit(o.what, proc, logPath, { t0, win, cpu, rows: o.rows });
    return { ...m, written: countLines(output) + countLines(join(o.runDir, 'reverified_failures.jsonl')) };
  } finally {
    cpu.stop();
    await win.close();
    await ref.stop();
  }
}

/** (c): the naive loop against a fresh reference server. */
async function measureNaive(
  latency: number,
  out: string,
  tag: string,
  data: RunFiles,
  rows: number,
  concurrency: number,
): Promise<Measured & { note: string }> {
  const ref = await startReferenceServerProc({
    latencyMs: latency,
    logPath: join(out, `c-${tag}.reference-server.log`),
    extraArgs: serverArgs,
  });
  const outPath = join(out, `c-${tag}.naive.jsonl`);
  const win = new VerifyWindow(ref.url, rows);
  const cpu = new CpuSampler();
  cpu.watch('reference server', ref.pid);
  cpu.watch('naive loop (bench)', process.pid);
  try {
    const run = await naiveLoop(ref.url, data.inputsPath, data.rolloutsPath, outPath, concurrency);
    const w = await win.result();
    return {
      rowsPerSec: rows / windowSec(w),
      window: w,
      ...cpuOf(cpu, w, rows),
      note:
        `client-side ${fixed(rows / ((run.endMs - run.startMs) / 1000))} rows/s, Map loaded in ${(run.loadMs / 1000).toFixed(1)} s, ` +
        `${countLines(outPath)} rows written, ${run.non200} non-200`,
    };
  } finally {
    cpu.stop();
    await win.close();
    await ref.stop();
  }
}
