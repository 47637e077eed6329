/**
 * The run's aggregate phase in flat memory: `aggregateOutput` with a POST that records each
 * group's body (a plain function standing in for the resources server), compared against bodies
 * built in memory (rows grouped first-seen, sorted by key, stable, stripped) and between the
 * in-memory and the spilling sort.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { aggregateOutput, type AggregateRequest } from '../../activities/aggregate-run.js';
import { outputPathsFor } from '../../src/contract/output-paths.js';
import { aggregateRequestBody, stripForAggregation } from '../../src/contract/aggregate-request.js';
import { compareKeys, keyOf } from '../../src/contract/row-key.js';
import type { PostAggregateMetrics } from '../../src/aggregation/aggregate-metrics-file.js';
import { readAggregateReply } from '../../src/aggregation/aggregate-reply.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-aggregate-run-');

/** A main output: three agents (one routed by task_source), repeated and mixed-type keys, big rows. */
function outputLines(n: number): string[] {
  const parts = ['3', '1', '1.0', 'true', '"b"', '"a"', '2', '0', 'false', '-1', '9007199254740993', '9007199254740992'];
  return Array.from({ length: n }, (_, i) => {
    const agent = ['agent_a', 'agent_b', 'agent_c'][i % 3];
    const source = i % 7 === 0 ? ',"task_source":"rs_direct"' : '';
    const big = i % 50 === 0 ? `,"blob":"${'x'.repeat(300_000)}"` : '';
    const task = parts[(i * 5) % parts.length];
    const rollout = parts[(i * 3) % parts.length];
    return (
      `{"_ng_task_index":${task},"_ng_rollout_index":${rollout},"reward":${i % 2}.0,"agent_ref":{"name":"${agent}"}${source},` +
      `"response":{"output":[],"usage":{"total_tokens":${i}}},"responses_create_params":{"input":"q${i}"},"i":${i}${big}}`
    );
  });
}

const routing = {
  agents: { agent_a: 'rs1', agent_b: 'rs1', agent_c: 'rs2' },
  catchAll: null,
  servers: { rs1: 'http://127.0.0.1:1', rs2: 'http://127.0.0.1:2', rs_direct: 'http://127.0.0.1:3' },
  taskSources: ['rs_direct'],
};

/** The bodies expected per `agent/server`, built in memory, in first-seen group order. */
function expectedBodies(lines: string[]): Map<string, string> {
  const groups = new Map<string, string[]>();
  for (const line of lines) {
    const row = JSON.parse(line) as { agent_ref: { name: string }; task_source?: string };
    const server = row.task_source === 'rs_direct' ? 'rs_direct' : routing.agents[row.agent_ref.name as keyof typeof routing.agents];
    const id = `${row.agent_ref.name}/${server}`;
    groups.set(id, [...(groups.get(id) ?? []), line]);
  }
  const byKey = (a: string, b: string) => compareKeys(keyOf(JSON.parse(a))!, keyOf(JSON.parse(b))!);
  return new Map([...groups].map(([id, ls]) => [id, aggregateRequestBody([...ls].sort(byKey).map(stripForAggregation))]));
}

async function aggregate(lines: string[], maxRecords?: number) {
  const dir = tmp.freshDir();
  const output = join(dir, 'out.jsonl');
  writeFileSync(output, lines.map((l, i) => (i % 9 === 4 ? `${l}\n\n` : `${l}\n`)).join(''));
  mkdirSync(outputPathsFor(output, '').workDir);
  const req: AggregateRequest = { output, metrics: join(dir, 'out_aggregate_metrics.json'), routing, timeoutMs: 1000 };
  const bodies = new Map<string, string>();
  const post: PostAggregateMetrics = async (server, bodyPath, replyPath) => {
    const text = readFileSync(bodyPath, 'utf8');
    const agent = (JSON.parse(text).verify_responses[0] as { agent_ref: { name: string } }).agent_ref.name;
    bodies.set(`${agent}/${server}`, text);
    writeFileSync(replyPath, JSON.stringify({ group_level_metrics: [], agent_metrics: { agent }, key_metrics: { server } }));
    return readAggregateReply(replyPath);
  };
  const result = await aggregateOutput(req, post, { maxRecords });
  return { dir, req, result, bodies, workDirFiles: readdirSync(outputPathsFor(output, '').workDir) };
}

describe('aggregateOutput (spec §4.13) in flat memory', () => {
  it.each([
    ['sorts in memory', undefined],
    ['sorts spilled every 6 records', 6],
    ['one record per run (merged in levels)', 1],
  ])('POSTs each group its rows sorted by key (stable), stripped, byte-identical: %s', async (_label, maxRecords) => {
    const lines = outputLines(240);
    const want = expectedBodies(lines);
    const got = await aggregate(lines, maxRecords);
    expect([...got.bodies.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [id, body] of want) expect(got.bodies.get(id), id).toBe(body);
    const entries = JSON.parse(readFileSync(got.req.metrics, 'utf8')) as Array<{ agent_ref: { name: string } }>;
    expect(entries).toHaveLength(want.size);
    expect(got.result.metricsPath).toBe(got.req.metrics);
    expect(got.workDirFiles).toEqual([]); // the scratch directory is removed
  });

  it('no named row: no request and no file', async () => {
    const got = await aggregate(['{"_ng_task_index":0,"_ng_rollout_index":0,"reward":1.0}'], 1);
    expect(got.bodies.size).toBe(0);
    expect(got.result).toEqual({ metricsPath: null, keyMetrics: [] });
    expect(readdirSync(got.dir).sort()).toEqual(['.out.jsonl.reverify', 'out.jsonl']);
  });
});
