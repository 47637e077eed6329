/**
 * Benchmark runs: NeMo Gym-shaped materialized inputs + rollouts written by the project's own
 * `writeSampleData` (streamed, so 10^6 rows fit in little memory), plus a gym config.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sampleGymConfigYaml, writeSampleData } from '../../src/demo/sample-data.js';

export const AGENT_NAMES = ['mcqa_simple_agent', 'mcqa_reasoning_agent', 'mcqa_tool_agent', 'mcqa_long_agent'];
export const RESOURCES_SERVER = 'mcqa_resources_server';
/** Port written into the gym config; a run overrides it with `--server <rs>=<url>`. */
export const CONFIG_PORT = 8000;

export interface RunFilesOptions {
  rows: number;
  /** Approximate size of each rollout's `response` object. */
  responseBytes: number;
  agents: number;
  /** Rollouts per task (reduced to a divisor of `rows` if needed). */
  repeats?: number;
  seed?: number;
}

export interface RunFiles {
  dir: string;
  inputsPath: string;
  rolloutsPath: string;
  configPath: string;
  rows: number;
  tasks: number;
  repeats: number;
  agents: string[];
  inputsBytes: number;
  rolloutsBytes: number;
  /** Seconds spent writing (0 when reused). */
  seconds: number;
  reused: boolean;
}

/** The largest divisor of `rows` that is at most `wanted` (so tasks × repeats is exactly `rows`). */
function repeatsFor(rows: number, wanted: number): number {
  for (let r = Math.max(1, Math.min(wanted, rows)); r > 1; r--) if (rows % r === 0) return r;
  return 1;
}

export function agentNames(count: number): string[] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`--agents must be an integer >= 1, got ${count}`);
  return Array.from({ length: count }, (_, i) => AGENT_NAMES[i] ?? `mcqa_agent_${i + 1}`);
}

/**
 * Writes a run into `dir` (`rollouts_materialized_inputs.jsonl`, `rollouts.jsonl`,
 * `gym_config.yaml`, `meta.json`). With `reuse`, a directory whose `meta.json` records the same
 * options is used as is.
 */
export async function writeRunFiles(dir: string, opts: RunFilesOptions, reuse = false): Promise<RunFiles> {
  if (!Number.isInteger(opts.rows) || opts.rows < 1) throw new RangeError(`--rows must be an integer >= 1, got ${opts.rows}`);
  const agents = agentNames(opts.agents);
  const repeats = repeatsFor(opts.rows, opts.repeats ?? 4);
  const tasks = opts.rows / repeats;
  const seed = opts.seed ?? 1;
  const meta = { rows: opts.rows, responseBytes: opts.responseBytes, agents, repeats, seed };
  const metaPath = join(dir, 'meta.json');
  const inputsPath = join(dir, 'rollouts_materialized_inputs.jsonl');
  const rolloutsPath = join(dir, 'rollouts.jsonl');
  const configPath = join(dir, 'gym_config.yaml');
  const sizes = () => ({ inputsBytes: statSync(inputsPath).size, rolloutsBytes: statSync(rolloutsPath).size });

  if (reuse && existsSync(metaPath) && existsSync(inputsPath) && existsSync(rolloutsPath) && existsSync(configPath)) {
    if (readFileSync(metaPath, 'utf8') === JSON.stringify(meta)) {
      return { dir, inputsPath, rolloutsPath, configPath, rows: opts.rows, tasks, repeats, agents, ...sizes(), seconds: 0, reused: true };
    }
  }
  await mkdir(dir, { recursive: true });
  const t0 = performance.now();
  await writeSampleData(dir, { tasks, repeats, agents, seed, responseBytes: opts.responseBytes });
  writeFileSync(configPath, sampleGymConfigYaml({ resourcesServer: RESOURCES_SERVER, host: '127.0.0.1', port: CONFIG_PORT, agents }));
  const seconds = (performance.now() - t0) / 1000;
  writeFileSync(metaPath, JSON.stringify(meta));
  return { dir, inputsPath, rolloutsPath, configPath, rows: opts.rows, tasks, repeats, agents, ...sizes(), seconds, reused: false };
}

/** `rows` given as `20000`, `2e4`, `1e6` or `20_000`. */
export function parseCount(flag: string, text: string): number {
  const n = Number(text.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${flag} takes a whole number >= 1 (e.g. 20000 or 1e5), got '${text}'`);
  return n;
}

export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}
