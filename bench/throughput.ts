/**
 * Throughput of `reverify run` against what the resources server can take and against a naive loop,
 * in one run, at each verifier latency (issue 4):
 *
 *   npx tsx bench/throughput.ts [--rows 20000] [--response-bytes 5000] [--latencies 0,20]
 *                               [--concurrency 64] [--batch-size N] [--agents 2] [--only a,b,c]
 *                               [--cpu-prof] [--out bench/out/throughput]
 *
 * (a) capacity: a plain undici Pool (keep-alive, `concurrency` connections, no Temporal) sending the
 *     payloads reverify would build (joined rows, `buildPayload`), prebuilt in memory;
 * (b) reverify: `node bin/reverify.js run … --concurrency C --no-rejudge --disable-aggregation
 *     --overwrite` as a user runs it, on an embedded Temporal dev server with its own state dir;
 * (c) naive: stream the rollouts, Map lookup, `fetch` with C in flight, append to a file.
 * Each measurement gets a fresh reference server in its own process; rows/s are timed from the
 * first `/verify` the server saw to the last one it answered (its `/stats`, polled). Numbers are
 * machine-dependent: read the ratios.
 */
import { readFileSync, rmSync, mkdirSync, readdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { driveCapacity, naiveLoop, prebuildPayloads } from './lib/clients.js';
import { describeProfiles } from './lib/cpuprofile.js';
import { mib, parseCount, RESOURCES_SERVER, writeRunFiles } from './lib/data.js';
import { benchEnv, ROOT, runBench, spawnCli, startDevServer, startReferenceServerProc, stopDevServer } from './lib/procs.js';
import { VerifyWindow, type WindowResult } from './lib/stats.js';
import { fixed, machineLine, ratio, table } from './lib/table.js';

/** reverify's own default (README: `--batch-size N`, default 200). */
const REVERIFY_DEFAULT_BATCH_SIZE = 200;
/** Most distinct payloads (a) keeps in memory; it cycles through them beyond that. */
const MAX_PREBUILT = 50_000;

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    'response-bytes': { type: 'string', default: '5000' },
    latencies: { type: 'string', default: '0,20' },
    concurrency: { type: 'string', default: '64' },
    'batch-size': { type: 'string' },
    agents: { type: 'string', default: '2' },
    only: { type: 'string', default: 'a,b,c' },
    'cpu-prof': { type: 'boolean', default: false },
    out: { type: 'string', default: join(ROOT, 'bench', 'out', 'throughput') },
  },
});

interface Measured {
  rowsPerSec: number;
  window: WindowResult;
  note: string;
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

runBench(async () => {
  const rows = parseCount('--rows', values.rows!);
  const responseBytes = parseCount('--response-bytes', values['response-bytes']!);
  const concurrency = parseCount('--concurrency', values.concurrency!);
  const latencies = values.latencies!.split(',').map((s) => {
    const n = Number(s);
    if (!Number.isFinite(n) || n < 0) throw new RangeError(`--latencies takes comma-separated milliseconds, got '${s}'`);
    return n;
  });
  const batchSize = values['batch-size'] === undefined ? undefined : parseCount('--batch-size', values['batch-size']);
  const only = new Set(values.only!.split(',').map((s) => s.trim()));
  const out = resolve(values.out!);
  mkdirSync(out, { recursive: true });

  console.log(machineLine());
  console.log(
    `rows ${rows}, response ~${responseBytes} B, concurrency ${concurrency}, latencies ${latencies.join(', ')} ms, ` +
      `--batch-size ${batchSize ?? `${REVERIFY_DEFAULT_BATCH_SIZE} (reverify default)`}, measuring ${[...only].join(',')}`,
  );
  const data = await writeRunFiles(join(ROOT, 'bench', 'out', 'data', `rows${rows}-resp${responseBytes}-agents${values.agents}`), {
    rows,
    responseBytes,
    agents: parseCount('--agents', values.agents!),
  }, true);
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
  if (only.has('b')) {
    // A state dir of our own: stop whatever a previous (crashed) bench left on it, then start clean.
    startDevServer(stateDir);
    stopDevServer(stateDir);
    rmSync(stateDir, { recursive: true, force: true });
    const server = startDevServer(stateDir);
    console.log(`Temporal dev server: ${server.address} (pid ${server.pid}), state dir ${stateDir}`);
  }

  const results: { latency: number; a?: Measured; b?: ReverifyMeasured; c?: Measured }[] = [];
  for (const latency of latencies) {
    const r: (typeof results)[number] = { latency };
    results.push(r);
    const tag = `L${latency}`;

    if (only.has('a')) {
      const ref = await startReferenceServerProc({ latencyMs: latency, logPath: join(out, `a-${tag}.reference-server.log`) });
      const win = new VerifyWindow(ref.url, rows);
      try {
        const run = await driveCapacity(ref.url, payloads, rows, concurrency);
        const w = await win.result();
        r.a = {
          rowsPerSec: rows / ((w.lastMs - w.firstMs) / 1000),
          window: w,
          note: `client-side ${fixed(rows / ((run.endMs - run.startMs) / 1000))} rows/s, ${run.non200} non-200`,
        };
      } finally {
        await win.close();
        await ref.stop();
      }
      console.log(`[L=${latency} ms] (a) capacity: ${fixed(r.a.rowsPerSec)} rows/s (${r.a.note}, peak in flight ${r.a.window.peakInFlight})`);
    }

    if (only.has('b')) {
      const ref = await startReferenceServerProc({ latencyMs: latency, logPath: join(out, `b-${tag}.reference-server.log`) });
      const runDir = join(out, `b-${tag}`);
      rmSync(runDir, { recursive: true, force: true });
      mkdirSync(runDir, { recursive: true });
      const output = join(runDir, 'reverified.jsonl');
      const args = [
        'run',
        '--inputs', data.inputsPath,
        '--rollouts', data.rolloutsPath,
        '-o', output,
        '--config', data.configPath,
        '--server', `${RESOURCES_SERVER}=${ref.url}`,
        '--concurrency', String(concurrency),
        '--no-rejudge', '--disable-aggregation', '--overwrite',
        ...(batchSize === undefined ? [] : ['--batch-size', String(batchSize)]),
      ];
      const profDir = join(runDir, 'cpu-prof');
      const nodeArgs = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
      const win = new VerifyWindow(ref.url, rows);
      try {
        const t0 = performance.now();
        const cli = spawnCli(args, { env: benchEnv(stateDir), logPath: join(runDir, 'reverify-run.log'), nodeArgs });
        const code = await cli.exited;
        const tExit = performance.now();
        if (code !== 0) throw new Error(`reverify run exited with status ${code}: see ${join(runDir, 'reverify-run.log')}`);
        const w = await Promise.race([
          win.result(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('reverify run ended before the server answered every row')), 5_000)),
        ]);
        const written = countLines(output) + countLines(join(runDir, 'reverified_failures.jsonl'));
        r.b = {
          rowsPerSec: rows / ((w.lastMs - w.firstMs) / 1000),
          rowsPerSecAfterStartup: rows / ((tExit - w.firstMs) / 1000),
          rowsPerSecWall: rows / ((tExit - t0) / 1000),
          wallSec: (tExit - t0) / 1000,
          startupSec: (w.firstMs - t0) / 1000,
          tailSec: (tExit - w.lastMs) / 1000,
          window: w,
          note: `${written} rows written${written === rows ? '' : ` (EXPECTED ${rows})`}`,
        };
      } finally {
        await win.close();
        await ref.stop();
      }
      const b = r.b;
      console.log(
        `[L=${latency} ms] (b) reverify: ${fixed(b.rowsPerSec)} rows/s first→last /verify; ${fixed(b.rowsPerSecAfterStartup)} rows/s ` +
          `wall−startup; wall ${b.wallSec.toFixed(1)} s = startup ${b.startupSec.toFixed(1)} s + verify ${((b.window.lastMs - b.window.firstMs) / 1000).toFixed(1)} s ` +
          `+ tail ${b.tailSec.toFixed(1)} s; ${b.note}; peak in flight ${b.window.peakInFlight}`,
      );
      if (values['cpu-prof'] && existsSync(profDir)) {
        const files = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(profDir, f));
        console.log(`CPU profile of the reverify run process (${profDir}):\n${describeProfiles(files, 25)}\n`);
      }
    }

    if (only.has('c')) {
      const ref = await startReferenceServerProc({ latencyMs: latency, logPath: join(out, `c-${tag}.reference-server.log`) });
      const outPath = join(out, `c-${tag}.naive.jsonl`);
      const win = new VerifyWindow(ref.url, rows);
      try {
        const run = await naiveLoop(ref.url, data.inputsPath, data.rolloutsPath, outPath, concurrency);
        const w = await win.result();
        const written = countLines(outPath);
        r.c = {
          rowsPerSec: rows / ((w.lastMs - w.firstMs) / 1000),
          window: w,
          note: `client-side ${fixed(rows / ((run.endMs - run.startMs) / 1000))} rows/s, Map loaded in ${(run.loadMs / 1000).toFixed(1)} s, ${written} rows written, ${run.non200} non-200`,
        };
      } finally {
        await win.close();
        await ref.stop();
      }
      console.log(`[L=${latency} ms] (c) naive loop: ${fixed(r.c.rowsPerSec)} rows/s (${r.c.note}, peak in flight ${r.c.window.peakInFlight})`);
    }
  }

  if (only.has('b')) stopDevServer(stateDir);

  console.log('');
  console.log(
    `rows/s, timed from the first /verify the reference server received to the last it answered (±${fixed(
      Math.max(...results.flatMap((r) => [r.a, r.b, r.c].filter((m): m is Measured => !!m).map((m) => m.window.resolutionMs))),
    )} ms each end); rows ${rows}, concurrency ${concurrency}, --batch-size ${batchSize ?? `${REVERIFY_DEFAULT_BATCH_SIZE} (default)`}`,
  );
  console.log(
    table(
      ['latency', '(a) capacity', '(b) reverify', '(b) wall−startup', '(b) wall', '(c) naive', 'b/a', 'b/c', '(b) startup s', '(b) tail s'],
      results.map((r) => [
        `${r.latency} ms`,
        fixed(r.a?.rowsPerSec ?? NaN),
        fixed(r.b?.rowsPerSec ?? NaN),
        fixed(r.b?.rowsPerSecAfterStartup ?? NaN),
        fixed(r.b?.rowsPerSecWall ?? NaN),
        fixed(r.c?.rowsPerSec ?? NaN),
        ratio(r.b?.rowsPerSec ?? NaN, r.a?.rowsPerSec ?? NaN),
        ratio(r.b?.rowsPerSec ?? NaN, r.c?.rowsPerSec ?? NaN),
        fixed(r.b?.startupSec ?? NaN, 1),
        fixed(r.b?.tailSec ?? NaN, 1),
      ]),
    ),
  );
  if (latencies.some((l) => l > 0)) {
    console.log(
      `(ceiling at latency L: concurrency / L = ${latencies.filter((l) => l > 0).map((l) => `${fixed((concurrency * 1000) / l)} rows/s at ${l} ms`).join(', ')})`,
    );
  }
  console.log(`outputs left for inspection under ${out}`);
});
