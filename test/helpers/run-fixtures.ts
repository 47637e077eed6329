import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeFailure } from '../../src/cli/exit-codes.js';
import { runCommand, type RunCommandIo } from '../../src/cli/run-command.js';
import type { RunResult } from '../../src/contract/run-spec.js';
import { sampleGymConfigYaml, writeSampleData } from '../../src/demo/sample-data.js';
import type { ReferenceServerOptions } from '../../src/reference-server/options.js';
import { startReferenceServer, type ReferenceServer } from '../../src/reference-server/server.js';
import { openForFile } from './hooks.js';

export const AGENTS = ['agent_a', 'agent_b'];
export const RS = 'mcqa_rs';

/** The reference resources server (started with `opts`) for the whole test file. */
export function useReferenceServer(opts: Partial<ReferenceServerOptions>): () => ReferenceServer {
  return openForFile(
    () => startReferenceServer(opts),
    (rs) => rs.close(),
  );
}

/** Sample data plus a gym config routing both agents to one resources server at `port`. */
export async function sampleRun(dir: string, port: number, opts: { tasks?: number; repeats?: number } = {}) {
  const data = await writeSampleData(dir, { tasks: opts.tasks ?? 30, repeats: opts.repeats ?? 4, agents: AGENTS, seed: 3 });
  const config = join(dir, 'gym.yaml');
  writeFileSync(config, sampleGymConfigYaml({ resourcesServer: RS, host: '127.0.0.1', port, agents: AGENTS }));
  return { ...data, config, output: join(dir, 'out.jsonl') };
}

/** `reverify run` arguments for a sample run (sampleRun's files and config), before any other flags. */
export function runArgs(d: { inputsPath: string; rolloutsPath: string; output: string; config: string }): string[] {
  return ['run', '--inputs', d.inputsPath, '--rollouts', d.rolloutsPath, '-o', d.output, '--config', d.config];
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

export interface RunOutcome {
  result: RunResult | null;
  lines: string[];
  error: { line: string; code: number } | null;
}

const proc = { worker: true, heartbeatTimeoutMs: 10_000 };

/**
 * Runs `reverify run` in-process with an in-process worker; returns its result and what it
 * printed, or its one-line error and exit code.
 */
export async function runInProcess(raw: Record<string, unknown>): Promise<RunOutcome> {
  const io = captureIo();
  try {
    const result = await runCommand(raw, proc, io);
    return { result, lines: io.lines, error: null };
  } catch (err) {
    return { result: null, lines: io.lines, error: describeFailure(err) };
  }
}

/** `runInProcess` as a single pass (`maxAttempts: 1`, NeMo Gym's behaviour) unless the options say otherwise. */
export function runReverify(raw: Record<string, unknown>): Promise<RunOutcome> {
  return runInProcess({ maxAttempts: 1, ...raw });
}
