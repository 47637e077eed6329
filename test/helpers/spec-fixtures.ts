/**
 * Small hand-written NeMo Gym fixtures for the spec §6 end-to-end checks (the §6.119 shape:
 * `inputs.jsonl`, `rollouts.jsonl` = successes, `rollouts_failures.jsonl` = sidecar). Rows are
 * written as raw text so floats such as `1.0` keep their bytes. Runs: `runReverify` (run-fixtures.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface RowSpec {
  t: number;
  r?: number;
  agent?: string;
}

const rcp = (t: number, r: number) => `{"input":[{"role":"user","content":"Question ${t}.${r}? Answer A or B."}],"temperature":1.0}`;

/** The stored model response of a key: carries usage (output_tokens = t + 1). */
export function responseText(t: number, r = 0): string {
  return (
    `{"id":"resp_${t}_${r}","object":"response","output":[{"type":"message","role":"assistant","content":` +
    `[{"type":"output_text","text":"\\\\boxed{A}","annotations":[]}]}],` +
    `"usage":{"input_tokens":10,"output_tokens":${t + 1},"total_tokens":${t + 11}}}`
  );
}

/** A materialized input row (with `skills_ref` when `skills` is set). */
export function inputLine({ t, r = 0, agent = 'agent_a' }: RowSpec, opts: { skills?: boolean } = {}): string {
  const skills = opts.skills ? `,"skills_ref":{"path":"skills/","hash":"h${t}","skills":[{"name":"s"}]}` : '';
  return (
    `{"responses_create_params":${rcp(t, r)},"expected_answer":"A","options":[{"A":"yes"},{"B":"no"}],` +
    `"agent_ref":{"type":"responses_api_agents","name":"${agent}"}${skills},"_ng_task_index":${t},"_ng_rollout_index":${r}}`
  );
}

/** A successful rollout row as collection wrote it (reward kept as written, e.g. `1.0`). */
export function successLine({ t, r = 0, agent = 'agent_a' }: RowSpec, rewardText = '1.0'): string {
  return (
    `{"responses_create_params":${rcp(t, r)},"response":${responseText(t, r)},"reward":${rewardText},` +
    `"expected_answer":"A","extracted_answer":"A","_ng_task_index":${t},"_ng_rollout_index":${r},` +
    `"agent_ref":{"type":"responses_api_agents","name":"${agent}"}}`
  );
}

/** A sidecar row of a failed attempt of class `cls` (judge failures carry the judge error). */
export function failureLine({ t, r = 0, agent = 'agent_a' }: RowSpec, cls = 'judge_failed', opts: { terminal?: boolean } = {}): string {
  const extra =
    cls === 'judge_failed'
      ? `,"_ng_failure_judge_error":"ClientResponseError: 429, message='Too Many Requests'"`
      : opts.terminal
        ? ',"_ng_failure_terminal":true,"error_message":"per-task timeout 3600s"'
        : '';
  return (
    `{"responses_create_params":${rcp(t, r)},"response":${responseText(t, r)},"reward":0.0,` +
    `"_ng_failure_class":"${cls}"${extra},"_ng_task_index":${t},"_ng_rollout_index":${r},` +
    `"agent_ref":{"type":"responses_api_agents","name":"${agent}"}}`
  );
}

/** A timeout_exceeded sidecar row (terminal). */
export function timeoutLine(row: RowSpec): string {
  return failureLine(row, 'timeout_exceeded', { terminal: true });
}

/** The `agent_ref` of an input row of `agent`. */
export function agentRef(name = 'agent_a') {
  return { type: 'responses_api_agents', name };
}

/** The payload NeMo Gym sends for key t: the materialized input row with the rollout's response. */
export function payload(t: number, agent = 'agent_a') {
  return { ...JSON.parse(inputLine({ t, agent })), response: JSON.parse(responseText(t)) };
}

/** A row `line` with a different stored response id, to tell which row a payload came from. */
export function withResponseId(line: string, id: string): string {
  return line.replace(/"id":"resp_\d+_\d+"/, `"id":"${id}"`);
}

/** Writes lines, each terminated by `\n`. */
export function writeLines(path: string, lines: string[]): void {
  writeFileSync(path, lines.map((l) => l + '\n').join(''));
}

/** Keys `0..n-1` (rollout 0) of one agent. */
export function tasks(ts: number[], agent = 'agent_a'): RowSpec[] {
  return ts.map((t) => ({ t, agent }));
}

export interface Fixture {
  dir: string;
  inputs: string;
  rollouts: string;
  /** `rollouts_failures.jsonl` (the recovery source). */
  rolloutsSidecar: string;
  output: string;
  outputSidecar: string;
  metrics: string;
}

/**
 * Writes `inputs.jsonl` (one row per key of `inputs`), `rollouts.jsonl` (successes) and, when
 * `failures` is given, `rollouts_failures.jsonl`. The output is `<dir>/<outputName>`.
 */
export function writeFixture(
  dir: string,
  spec: {
    inputs: RowSpec[];
    successes?: string[];
    failures?: string[];
    outputName?: string;
    skills?: (row: RowSpec) => boolean;
  },
): Fixture {
  const inputs = join(dir, 'inputs.jsonl');
  const rollouts = join(dir, 'rollouts.jsonl');
  const rolloutsSidecar = join(dir, 'rollouts_failures.jsonl');
  writeLines(
    inputs,
    spec.inputs.map((row) => inputLine(row, { skills: spec.skills?.(row) })),
  );
  writeLines(rollouts, spec.successes ?? spec.inputs.map((row) => successLine(row)));
  if (spec.failures) writeLines(rolloutsSidecar, spec.failures);
  const name = spec.outputName ?? 'out';
  return {
    dir,
    inputs,
    rollouts,
    rolloutsSidecar,
    output: join(dir, `${name}.jsonl`),
    outputSidecar: join(dir, `${name}_failures.jsonl`),
    metrics: join(dir, `${name}_aggregate_metrics.json`),
  };
}

/** A NeMo Gym config routing each agent to its own resources server (instance name -> URL). */
export function writeAgentsConfig(dir: string, routes: Record<string, { server: string; url: string }>, file = 'gym.yaml'): string {
  const lines: string[] = ['head_server:', '  host: 127.0.0.1', '  port: 11000'];
  const servers = new Map<string, string>();
  for (const [agent, { server, url }] of Object.entries(routes)) {
    servers.set(server, url);
    lines.push(
      `${agent}:`,
      '  responses_api_agents:',
      '    simple_agent:',
      '      entrypoint: app.py',
      '      resources_server:',
      '        type: resources_servers',
      `        name: ${server}`,
    );
  }
  for (const [server, url] of servers) {
    const u = new URL(url);
    lines.push(
      `${server}:`,
      '  resources_servers:',
      '    mcqa:',
      '      entrypoint: app.py',
      `      host: ${u.hostname}`,
      `      port: ${u.port}`,
    );
  }
  const path = join(dir, file);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

/** A resources-only NeMo Gym config: one resources server block, no agents. */
export function writeResourcesOnlyConfig(dir: string, server: string, url: string, file = 'resources.yaml'): string {
  const u = new URL(url);
  const path = join(dir, file);
  writeFileSync(
    path,
    [
      `${server}:`,
      '  resources_servers:',
      '    mcqa:',
      '      entrypoint: app.py',
      `      host: ${u.hostname}`,
      `      port: ${u.port}`,
    ].join('\n') + '\n',
  );
  return path;
}

/** Non-blank lines of a JSONL file (raw text); `[]` when the file does not exist. */
export function lines(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
}

/** Parsed rows of a JSONL file; `[]` when it does not exist. */
export function rows(path: string): Array<Record<string, unknown>> {
  return lines(path).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** `task:rollout` of each row, in file order. */
export { keysOf as keys } from './run-fixtures.js';
