import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sampleGymConfigYaml, writeSampleData } from '../../src/demo/sample-data.js';
import { gradeMcqa } from '../../src/reference-server/grading.js';

type Row = Record<string, any>;

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'reverify-sample-data-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function readJsonl(path: string): Promise<Row[]> {
  const text = await readFile(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as Row);
}

const key = (row: Row): string => `${row._ng_task_index}:${row._ng_rollout_index}`;

describe('writeSampleData', () => {
  it('writes valid JSONL inputs in aabbcc order and rollouts that join them 1:1', async () => {
    const dir = join(root, 'small');
    const data = await writeSampleData(dir, { tasks: 5, repeats: 3, agents: ['agent_a', 'agent_b'] });
    expect(data).toEqual({
      inputsPath: join(dir, 'rollouts_materialized_inputs.jsonl'),
      rolloutsPath: join(dir, 'rollouts.jsonl'),
      rows: 15,
    });
    const inputs = await readJsonl(data.inputsPath);
    const rollouts = await readJsonl(data.rolloutsPath);

    expect(inputs.map(key)).toEqual(Array.from({ length: 15 }, (_, i) => `${Math.floor(i / 3)}:${i % 3}`));
    for (const input of inputs) {
      expect(input.agent_ref).toEqual({
        type: 'responses_api_agents',
        name: input._ng_task_index % 2 === 0 ? 'agent_a' : 'agent_b',
      });
      expect(input.responses_create_params.input[0].role).toBe('user');
      expect(input.options.map((option: Row) => Object.keys(option)[0])).toEqual(['A', 'B', 'C', 'D']);
      expect(['A', 'B', 'C', 'D']).toContain(input.expected_answer);
    }

    const inputsByKey = new Map(inputs.map((input) => [key(input), input]));
    expect(new Set(rollouts.map(key))).toEqual(new Set(inputsByKey.keys()));
    expect(rollouts.length).toBe(inputs.length);
    expect(rollouts.map(key)).not.toEqual(inputs.map(key)); // completion order, not aabbcc

    for (const rollout of rollouts) {
      const input = inputsByKey.get(key(rollout))!;
      expect(rollout.agent_ref).toEqual(input.agent_ref);
      expect(rollout.responses_create_params).toEqual(input.responses_create_params);
      expect(rollout.response.object).toBe('response');
      expect(rollout.response.usage.total_tokens).toBe(rollout.response.usage.input_tokens + rollout.response.usage.output_tokens);
      // The stored reward is what the reference server's grading gives.
      expect(gradeMcqa(rollout.response, input.expected_answer)).toEqual({
        reward: rollout.reward,
        expected_answer: rollout.expected_answer,
        extracted_answer: rollout.extracted_answer,
      });
    }
  });

  it('is deterministic for a seed and differs across seeds', async () => {
    const opts = { tasks: 20, repeats: 2, agents: ['a'] };
    const first = await writeSampleData(join(root, 'seed-1a'), { ...opts, seed: 9 });
    const second = await writeSampleData(join(root, 'seed-1b'), { ...opts, seed: 9 });
    const other = await writeSampleData(join(root, 'seed-2'), { ...opts, seed: 10 });
    const rollouts = await readFile(first.rolloutsPath, 'utf8');
    expect(await readFile(second.rolloutsPath, 'utf8')).toBe(rollouts);
    expect(await readFile(second.inputsPath, 'utf8')).toBe(await readFile(first.inputsPath, 'utf8'));
    expect(await readFile(other.rolloutsPath, 'utf8')).not.toBe(rollouts);
  });

  it('pads responses to about responseBytes and honours correctRate', async () => {
    const data = await writeSampleData(join(root, 'padded'), {
      tasks: 10,
      repeats: 2,
      agents: ['a'],
      responseBytes: 20_000,
      correctRate: 1,
    });
    for (const rollout of await readJsonl(data.rolloutsPath)) {
      expect(JSON.stringify(rollout.response).length).toBeGreaterThan(19_000);
      expect(JSON.stringify(rollout.response).length).toBeLessThan(21_000);
      expect(rollout.response.output[0].type).toBe('reasoning');
      expect(rollout.reward).toBe(1);
    }
    const wrong = await writeSampleData(join(root, 'wrong'), { tasks: 10, repeats: 2, agents: ['a'], correctRate: 0 });
    expect((await readJsonl(wrong.rolloutsPath)).every((rollout) => rollout.reward === 0)).toBe(true);
  });

  it('rejects options it cannot honour', async () => {
    await expect(writeSampleData(join(root, 'bad'), { tasks: 1, repeats: 0, agents: ['a'] })).rejects.toThrow(RangeError);
    await expect(writeSampleData(join(root, 'bad'), { tasks: 1, repeats: 1, agents: [] })).rejects.toThrow(RangeError);
  });
});

describe('sampleGymConfigYaml', () => {
  it('routes every agent block to the mcqa resources server block', () => {
    const yaml = sampleGymConfigYaml({ resourcesServer: 'mcqa_rs', host: '127.0.0.1', port: 9000, agents: ['a1', 'a2'] });
    const config = parse(yaml) as Row;
    expect(Object.keys(config)).toEqual(['a1', 'a2', 'mcqa_rs']);
    expect(config.a1.responses_api_agents.simple_agent).toMatchObject({
      host: '127.0.0.1',
      entrypoint: 'app.py',
      resources_server: { type: 'resources_servers', name: 'mcqa_rs' },
    });
    expect(config.a2.responses_api_agents.simple_agent.resources_server.name).toBe('mcqa_rs');
    expect(config.mcqa_rs).toEqual({
      resources_servers: { mcqa: { host: '127.0.0.1', port: 9000, entrypoint: 'app.py', domain: 'knowledge' } },
    });
  });
});
