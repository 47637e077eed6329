import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'yaml';
import { mulberry32 } from '../reference-server/prng.js';

/** Options of `writeSampleData`. */
export interface SampleDataOptions {
  /** Number of distinct tasks (questions). */
  tasks: number;
  /** Rollouts per task (`num_repeats`). */
  repeats: number;
  /** Agent names; task t belongs to `agents[t % agents.length]`. */
  agents: string[];
  /** PRNG seed; equal options give byte-identical files. Default 1. */
  seed?: number;
  /** Approximate size of each `response` object in bytes (padded with a reasoning item). Default 600. */
  responseBytes?: number;
  /** Probability that a rollout's boxed answer is the expected letter. Default 0.7. */
  correctRate?: number;
}

/** What `writeSampleData` wrote. */
export interface SampleData {
  /** `<dir>/rollouts_materialized_inputs.jsonl`: one row per (task, rollout), "aabbcc" order. */
  inputsPath: string;
  /** `<dir>/rollouts.jsonl`: the same keys, each once, in a shuffled completion order. */
  rolloutsPath: string;
  /** Number of rows in each file (tasks × repeats). */
  rows: number;
}

const LETTERS = ['A', 'B', 'C', 'D'] as const;
const DISTRACTOR_OFFSETS = [10, -10, 1];
const WRITE_BATCH_CHARS = 1 << 20;
const CREATED_AT = 1_700_000_000;
const FILLER_WORDS =
  'First add the hundreds, then the tens, then the units, carrying where a column exceeds nine; ' +
  'check the sum by subtracting one addend from it and comparing with the other option values. ';
/** Bytes a reasoning item adds besides its text (ids are short). */
const REASONING_OVERHEAD = '{"type":"reasoning","id":"rs_000000_00","summary":[{"type":"summary_text","text":""}]},'.length;

interface Task {
  content: string;
  options: Record<string, string>[];
  values: number[];
}

/** The deterministic question of task `t`, with the right sum at option `expected`. */
function taskOf(t: number, expected: number): Task {
  const a = ((t * 7919 + 13) % 900) + 100;
  const b = ((t * 104_729 + 7) % 900) + 100;
  const distractors = DISTRACTOR_OFFSETS.map((offset) => a + b + offset);
  const values = LETTERS.map((_, i) => (i === expected ? a + b : distractors[i < expected ? i : i - 1]));
  const options = LETTERS.map((letter, i) => ({ [letter]: String(values[i]) }));
  const listed = LETTERS.map((letter, i) => `${letter}) ${values[i]}`).join('\n');
  const content = `What is ${a} + ${b}? Answer with the letter of the correct option as \\boxed{X}.\n${listed}`;
  return { content, options, values };
}

function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Joins lines into strings of about 1 MiB, so the file stream gets few large writes. */
function* batched(lines: Iterable<string>): Generator<string> {
  let batch = '';
  for (const line of lines) {
    batch += line + '\n';
    if (batch.length >= WRITE_BATCH_CHARS) {
      yield batch;
      batch = '';
    }
  }
  if (batch) yield batch;
}

async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
  await pipeline(Readable.from(batched(lines)), createWriteStream(path));
}

/** What every generated line needs: the options, each task's right letter and the one PRNG. */
interface SampleRun {
  tasks: number;
  repeats: number;
  responseBytes: number;
  correctRate: number;
  expected: Uint8Array;
  random: () => number;
  filler: string;
  agentRef: (t: number) => { type: string; name: string };
}

function* inputLines(run: SampleRun): Generator<string> {
  for (let t = 0; t < run.tasks; t++) {
    const { content, options } = taskOf(t, run.expected[t]);
    for (let r = 0; r < run.repeats; r++) {
      yield JSON.stringify({
        responses_create_params: { input: [{ role: 'user', content }] },
        options,
        expected_answer: LETTERS[run.expected[t]],
        agent_ref: run.agentRef(t),
        _ng_task_index: t,
        _ng_rollout_index: r,
      });
    }
  }
}

/** A Fisher–Yates permutation of 0..n-1: the rollouts' completion order. */
function shuffledOrder(n: number, random: () => number): Uint32Array {
  const order = new Uint32Array(n);
  for (let k = 0; k < n; k++) order[k] = k;
  for (let k = n - 1; k > 0; k--) {
    const j = Math.floor(random() * (k + 1));
    const swap = order[k];
    order[k] = order[j];
    order[j] = swap;
  }
  return order;
}

/** The Responses API object of one rollout whose final text is `text`. */
function responseOf(task: Task, t: number, r: number, done: number, text: string) {
  const message = {
    type: 'message',
    id: `msg_${t}_${r}`,
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
  return {
    id: `resp_${t}_${r}`,
    object: 'response',
    created_at: CREATED_AT + done,
    model: 'reference-policy',
    status: 'completed',
    output: [message] as object[],
    parallel_tool_calls: false,
    tool_choice: 'auto',
    tools: [],
    usage: {
      input_tokens: tokens(task.content),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: tokens(text),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: tokens(task.content) + tokens(text),
    },
  };
}

/** Pads `response` to about `run.responseBytes` with a reasoning item cut from the filler text. */
function padWithReasoning(run: SampleRun, response: ReturnType<typeof responseOf>, t: number, r: number): void {
  const padding = run.responseBytes - JSON.stringify(response).length - REASONING_OVERHEAD;
  if (padding <= 0) return;
  const start = Math.floor(run.random() * FILLER_WORDS.length);
  const reasoning = run.filler.slice(start, start + padding);
  response.output.unshift({ type: 'reasoning', id: `rs_${t}_${r}`, summary: [{ type: 'summary_text', text: reasoning }] });
  response.usage.output_tokens += tokens(reasoning);
  response.usage.output_tokens_details.reasoning_tokens = tokens(reasoning);
  response.usage.total_tokens += tokens(reasoning);
}

/** The rollout line of task `t`, repeat `r`, completed `done`-th. */
function rolloutLine(run: SampleRun, t: number, r: number, done: number): string {
  const task = taskOf(t, run.expected[t]);
  const correct = run.random() < run.correctRate;
  const chosen = correct ? run.expected[t] : (run.expected[t] + 1 + Math.floor(run.random() * 3)) % LETTERS.length;
  const text = `The sum is ${task.values[chosen]}, so the answer is \\boxed{${LETTERS[chosen]}}.`;
  const response = responseOf(task, t, r, done, text);
  padWithReasoning(run, response, t, r);
  return JSON.stringify({
    responses_create_params: { input: [{ role: 'user', content: task.content }] },
    response,
    reward: correct ? 1.0 : 0.0,
    expected_answer: LETTERS[run.expected[t]],
    extracted_answer: LETTERS[chosen],
    _ng_task_index: t,
    _ng_rollout_index: r,
    agent_ref: run.agentRef(t),
  });
}

function* rolloutLines(run: SampleRun): Generator<string> {
  const order = shuffledOrder(run.tasks * run.repeats, run.random);
  for (let done = 0; done < order.length; done++) {
    yield rolloutLine(run, Math.floor(order[done] / run.repeats), order[done] % run.repeats, done);
  }
}

/**
 * Writes a deterministic NeMo Gym-shaped sample run into `dir` (created if missing): the
 * materialized inputs (spec §1.3) and the rollouts (spec §1.4) of an mcqa-style benchmark whose
 * answers are `\boxed{<letter>}`. Files are streamed, so 10^6 rows and more fit in little memory.
 */
export async function writeSampleData(dir: string, opts: SampleDataOptions): Promise<SampleData> {
  const { tasks, repeats, agents, seed = 1, responseBytes = 600, correctRate = 0.7 } = opts;
  if (!Number.isInteger(tasks) || tasks < 0) throw new RangeError(`tasks must be an integer >= 0, got ${tasks}`);
  if (!Number.isInteger(repeats) || repeats < 1) throw new RangeError(`repeats must be an integer >= 1, got ${repeats}`);
  if (agents.length === 0) throw new RangeError('agents must name at least one agent');

  const random = mulberry32(seed);
  const run: SampleRun = {
    tasks,
    repeats,
    responseBytes,
    correctRate,
    random,
    expected: Uint8Array.from({ length: tasks }, () => Math.floor(random() * LETTERS.length)),
    filler: FILLER_WORDS.repeat(Math.ceil((responseBytes + FILLER_WORDS.length) / FILLER_WORDS.length)),
    agentRef: (t) => ({ type: 'responses_api_agents', name: agents[t % agents.length] }),
  };
  await mkdir(dir, { recursive: true });
  const inputsPath = join(dir, 'rollouts_materialized_inputs.jsonl');
  const rolloutsPath = join(dir, 'rollouts.jsonl');
  await writeLines(inputsPath, inputLines(run));
  await writeLines(rolloutsPath, rolloutLines(run));
  return { inputsPath, rolloutsPath, rows: tasks * repeats };
}

/** Options of `sampleGymConfigYaml`. */
export interface SampleGymConfigOptions {
  /** Instance name of the resources server block. */
  resourcesServer: string;
  /** Host of the resources server (agents get the same host). */
  host: string;
  /** Port of the resources server (agent blocks get the following ports; reverify never calls them). */
  port: number;
  /** Agent instance names, each routed to the resources server. */
  agents: string[];
}

/**
 * A NeMo Gym config (spec §2.0) with one `simple_agent` block per agent, each pointing at one
 * `mcqa` resources server block: `{<agent>: {responses_api_agents: {simple_agent: {...}}}, <rs>: {...}}`.
 */
export function sampleGymConfigYaml(opts: SampleGymConfigOptions): string {
  const config: Record<string, unknown> = {};
  opts.agents.forEach((agent, i) => {
    config[agent] = {
      responses_api_agents: {
        simple_agent: {
          host: opts.host,
          port: opts.port + 1 + i,
          entrypoint: 'app.py',
          resources_server: { type: 'resources_servers', name: opts.resourcesServer },
        },
      },
    };
  });
  config[opts.resourcesServer] = {
    resources_servers: {
      mcqa: { host: opts.host, port: opts.port, entrypoint: 'app.py', domain: 'knowledge' },
    },
  };
  return stringify(config);
}
