/**
 * Times the plan phase alone (the `planRun` activity, in this process, on a mock activity context):
 *
 *   npx tsx bench/plan.ts [--rows 1e6] [--response-bytes 500] [--data DIR] [--repeat 3] [--one-thread] [--order random|file] [--cpu-prof]
 *
 * Generates (or reuses) a run in `bench/out/data/plan-<rows>-<bytes>/`, then plans it `--repeat`
 * times with a fresh work directory each time (`bench/out/plan-work/`, left there: `plan.bin`, `plan.json`) and prints seconds, rows/s, MiB/s of input read and
 * the process's peak RSS, and the largest size of the work directory (its sort runs) against the
 * inputs. `--data DIR`: plan a run bench/lib/data.ts wrote before (e.g. scale.ts's 10^7 rows). On a shared machine compare the CPU seconds (this process's user + system
 * time, all threads; and the main thread's alone, where the plan decides everything). `--cpu-prof`: run it again under `node --cpu-prof` yourself, e.g.
 * `node --cpu-prof --cpu-prof-dir bench/out/plan-prof --import tsx bench/plan.ts --repeat 1`, then
 * `npx tsx bench/profile-top.ts bench/out/plan-prof`.
 */
import { readFileSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { MockActivityEnvironment } from '@temporalio/testing';
import { planRun } from '../activities/plan-run.js';
import { routingFromGymConfig } from '../src/config/routing.js';
import { loadGymConfigs } from '../src/config/gym-config.js';
import { sampleTreeBytes } from './lib/after-run.js';
import { mib, parseCount, writeRunFiles } from './lib/data.js';
import { readVm } from './lib/rss.js';

/** CPU seconds (user + system) of this process's main thread so far (Linux `/proc`; NaN elsewhere). */
function mainThreadCpu(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return NaN;
  }
}

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1e6' },
    'response-bytes': { type: 'string', default: '500' },
    repeat: { type: 'string', default: '3' },
    'one-thread': { type: 'boolean', default: false },
    order: { type: 'string', default: 'file' },
    data: { type: 'string' },
  },
});
// --data: the run's own size (its meta.json), so that an existing run is reused, never rewritten.
const meta = values.data
  ? (JSON.parse(readFileSync(join(values.data, 'meta.json'), 'utf8')) as {
      rows: number;
      responseBytes: number;
      agents: string[];
      repeats: number;
      seed: number;
    })
  : null;
const rows = meta?.rows ?? parseCount('--rows', values.rows);
const responseBytes = meta?.responseBytes ?? parseCount('--response-bytes', values['response-bytes']);
const dir = values.data ? resolve(values.data) : resolve('bench/out/data', `plan-${rows}-${responseBytes}`);
const shape = meta ? { agents: meta.agents.length, repeats: meta.repeats, seed: meta.seed } : { agents: 2 };
const files = await writeRunFiles(dir, { rows, responseBytes, ...shape }, true);
const routing = routingFromGymConfig(await loadGymConfigs([files.configPath]), {});
const bytes = statSync(files.inputsPath).size + statSync(files.rolloutsPath).size;
console.log(`plan phase: ${files.rows} rows, ${mib(bytes)} of inputs + rollouts (${dir})`);
const seconds: number[] = [];
for (let i = 0; i < Number(values.repeat); i++) {
  const workDir = resolve('bench/out/plan-work');
  await rm(workDir, { recursive: true, force: true });
  const disk = sampleTreeBytes(workDir, 1_000);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpu();
  const out = await new MockActivityEnvironment().run<[Parameters<typeof planRun>[0]], Awaited<ReturnType<typeof planRun>>, typeof planRun>(
    planRun,
    {
      inputsPath: files.inputsPath,
      rolloutsPath: files.rolloutsPath,
      workDir,
      routing,
      limit: null,
      judgeFailedOnly: false,
      resume: false,
      outputs: { output: join(dir, 'out.jsonl'), sidecar: join(dir, 'out_failures.jsonl') },
      outputsCleared: true,
      maxAttempts: 3,
      repairTruncated: false,
      // --order random: the plan permuted by task (seed 1), to compare with file order.
      ...(values.order === 'random' ? { order: { kind: 'random' as const, seed: 1 } } : {}),
      // --one-thread: no second scanning thread (ScanAhead), to compare.
      ...(values['one-thread'] ? { scanAheadMinBytes: Infinity } : {}),
    },
  );
  const s = (performance.now() - t0) / 1000;
  const diskPeak = disk.stop();
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const mainS = mainThreadCpu() - main0;
  seconds.push(s);
  const vm = readVm(process.pid);
  console.log(
    `run ${i + 1}: ${s.toFixed(2)} s (CPU ${cpuS.toFixed(2)} s, main thread ${mainS.toFixed(2)} s), ${Math.round(out.rows / s)} rows/s, ${(bytes / 2 ** 20 / s).toFixed(0)} MiB/s; ` +
      `plan ${out.rows} rows; peak RSS ${vm ? Math.round(vm.hwmKiB / 1024) : '?'} MiB; work directory at most ${mib(diskPeak)} ` +
      `(${((100 * diskPeak) / bytes).toFixed(1)} % of the inputs)`,
  );
  if (readFileSync(join(workDir, 'plan.json'), 'utf8').length === 0) throw new Error('no plan.json');
}
seconds.sort((a, b) => a - b);
console.log(`median ${seconds[Math.floor(seconds.length / 2)].toFixed(2)} s, best ${seconds[0].toFixed(2)} s`);
