import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunCommandIo } from '../../src/cli/run-command.js';
import { sampleGymConfigYaml, writeSampleData } from '../../src/demo/sample-data.js';

export const AGENTS = ['agent_a', 'agent_b'];
export const RS = 'mcqa_rs';

/** Sample data plus a gym config routing both agents to one resources server at `port`. */
export async function sampleRun(dir: string, port: number, opts: { tasks?: number; repeats?: number } = {}) {
  const data = await writeSampleData(dir, { tasks: opts.tasks ?? 30, repeats: opts.repeats ?? 4, agents: AGENTS, seed: 3 });
  const config = join(dir, 'gym.yaml');
  writeFileSync(config, sampleGymConfigYaml({ resourcesServer: RS, host: '127.0.0.1', port, agents: AGENTS }));
  return { ...data, config, output: join(dir, 'out.jsonl') };
}

/** Captures what a command prints. */
export function captureIo(): RunCommandIo & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (l) => lines.push(l), bar: () => undefined, tty: false };
}

/** Non-blank lines of a JSONL file, parsed. */
export function readRows(path: string): Array<Record<string, unknown>> {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/** `task:rollout` of each row. */
export function keysOf(rows: Array<Record<string, unknown>>): string[] {
  return rows.map((r) => `${r._ng_task_index}:${r._ng_rollout_index}`);
}
