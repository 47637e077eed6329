/**
 * `reverify aggregate` (spec §4.15) against the real reference resources server and real files.
 * No Temporal: the subprocess tests point TEMPORAL_ADDRESS at a closed port to prove it.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { stringify } from 'yaml';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { aggregateCommand } from '../../src/cli/aggregate-command.js';
import { describeFailure } from '../../src/cli/exit-codes.js';
import { aggregateRequestBody, stripForShardAggregation } from '../../src/contract/aggregate-request.js';
import { catchAllWarning, malformedShard, noShardsMatched } from '../../src/contract/messages.js';
import { managedShardRefused, runTaggedWithoutManifest } from '../../src/contract/managed-run.js';
import { compareKeys, keyOf } from '../../src/contract/row-key.js';
import { sampleGymConfigYaml, writeSampleData } from '../../src/demo/sample-data.js';
import { DuplicateKeyFinder, duplicateKeyMessage } from '../../src/aggregation/duplicate-keys.js';
import { readShardRows } from '../../src/aggregation/shard-rows.js';
import { startReferenceServer, type ReferenceServer } from '../../src/reference-server/server.js';
import { reverifyBin } from '../helpers/worker-process.js';
import { escapeRegExp } from '../helpers/regexp.js';

const AGENTS = ['agent_a', 'agent_b'];
const RS = 'mcqa_rs';

let rs: ReferenceServer;
beforeAll(async () => {
  rs = await startReferenceServer({ port: 0, seed: 11 });
});
afterAll(async () => rs.close());
beforeEach(() => rs.resetStats());

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'reverify-aggregate-'));
}

/** Non-blank lines of a file, as text. */
function linesOf(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
}

function keyOfLine(line: string) {
  return keyOf(JSON.parse(line))!;
}

/**
 * A sharded run: the sample rollouts split round-robin into `shards/run_<i>.jsonl` (completion
 * order, unsorted), each with a `run_<i>_failures.jsonl` of judge failures for other keys, and a
 * gym config routing both agents to the reference server.
 */
async function shardedRun(dir: string, opts: { tasks?: number; repeats?: number; shards?: number } = {}) {
  const data = await writeSampleData(dir, { tasks: opts.tasks ?? 15, repeats: opts.repeats ?? 3, agents: AGENTS, seed: 4 });
  const all = linesOf(data.rolloutsPath);
  const n = opts.shards ?? 2;
  const shardDir = join(dir, 'shards');
  mkdirSync(shardDir, { recursive: true });
  const shardPaths: string[] = [];
  for (let i = 0; i < n; i++) {
    const path = join(shardDir, `run_${i}.jsonl`);
    writeFileSync(path, all.filter((_, j) => j % n === i).join('\n') + '\n');
    shardPaths.push(path);
    const failures = [0, 1].map((r) =>
      JSON.stringify({
        reward: 0.0,
        _ng_failure_class: 'judge_failed',
        _ng_failure_judge_error: 'JudgeError: 429',
        _ng_task_index: 1000 + i,
        _ng_rollout_index: r,
        agent_ref: { type: 'responses_api_agents', name: AGENTS[i % AGENTS.length] },
      }),
    );
    writeFileSync(join(shardDir, `run_${i}_failures.jsonl`), failures.join('\n') + '\n');
  }
  const config = join(dir, 'gym.yaml');
  writeFileSync(config, sampleGymConfigYaml({ resourcesServer: RS, host: '127.0.0.1', port: rs.port, agents: AGENTS }));
  return { all, shardDir, shardPaths, config, glob: join(shardDir, '*.jsonl'), output: join(dir, 'merged.jsonl') };
}

/** Runs the command in-process; returns its result or its one-line error and exit code. */
async function aggregate(raw: Record<string, unknown>) {
  const lines: string[] = [];
  try {
    const result = await aggregateCommand(raw, { out: (l) => lines.push(l) });
    return { result, lines, error: null as null | { line: string; code: number } };
  } catch (err) {
    return { result: null, lines, error: describeFailure(err) };
  }
}

/** One direct, unsharded `POST /aggregate_metrics` per agent of `rowLines`, in key order. */
async function directMetrics(rowLines: string[]) {
  const out: Record<string, unknown> = {};
  for (const agent of AGENTS) {
    const mine = rowLines
      .filter((l) => (JSON.parse(l).agent_ref as { name: string }).name === agent)
      .sort((a, b) => compareKeys(keyOfLine(a), keyOfLine(b)));
    const res = await request(`${rs.url}/aggregate_metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: aggregateRequestBody(mine.map(stripForShardAggregation)),
    });
    expect(res.statusCode).toBe(200);
    out[agent] = await res.body.json();
  }
  return out;
}

/** `<entries of the metrics file>` keyed by agent name. */
function metricsByAgent(path: string): Record<string, Record<string, unknown>> {
  const entries = JSON.parse(readFileSync(path, 'utf8')) as Array<Record<string, unknown>>;
  return Object.fromEntries(entries.map((e) => [(e.agent_ref as { name: string }).name, e]));
}

describe('reverify aggregate (real reference server, real files)', () => {
  it('excludes *_failures.jsonl, merges sorted byte-identical rows, and gives the metrics of one unsharded aggregation', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir);
    // A key that failed once and was scored later (in another shard) is not missing from the score.
    const rescued = keyOfLine(d.all[0]);
    appendFileSync(
      join(d.shardDir, 'run_1_failures.jsonl'),
      JSON.stringify({ _ng_failure_class: 'judge_failed', _ng_task_index: rescued.task, _ng_rollout_index: rescued.rollout }) + '\n',
    );
    const { result, lines, error } = await aggregate({ inputGlob: d.glob, output: d.output, configs: [d.config] });
    expect(error).toBeNull();

    expect(result!.shards).toEqual(d.shardPaths);
    expect(result!.excluded).toEqual([join(d.shardDir, 'run_0_failures.jsonl'), join(d.shardDir, 'run_1_failures.jsonl')]);
    expect(lines).toContain(
      'Excluded 2 failures sidecar file(s) (*_failures.jsonl) matched by --input-glob: failure rows are never merged or aggregated',
    );

    // Merged: every success row once, byte for byte, sorted by key; no failure row.
    const merged = linesOf(d.output);
    expect(merged).toHaveLength(d.all.length);
    expect([...merged].sort()).toEqual([...d.all].sort());
    const keys = merged.map(keyOfLine);
    for (let i = 1; i < keys.length; i++) expect(compareKeys(keys[i - 1], keys[i])).toBeLessThan(0);
    expect(readFileSync(d.output, 'utf8')).toBe(merged.join('\n') + '\n');
    expect(existsSync(`${d.output}.tmp-${process.pid}`)).toBe(false);

    // Metrics: one /aggregate_metrics per agent, equal to a direct unsharded aggregation.
    expect(rs.stats().requests.aggregate_metrics).toBe(AGENTS.length);
    const metricsPath = join(dir, 'merged_aggregate_metrics.json');
    expect(result!.metricsPath).toBe(metricsPath);
    const text = readFileSync(metricsPath, 'utf8');
    expect(text.endsWith('\n')).toBe(false);
    const file = metricsByAgent(metricsPath);
    const direct = await directMetrics(d.all);
    for (const agent of AGENTS) {
      // NeMo Gym 0.7.0's entry: agent_ref, then the reply's kept fields in its order.
      expect(Object.keys(file[agent])).toEqual([
        'agent_ref',
        'agent_metrics',
        'key_metrics',
        'group_level_metrics',
        'repeat_level_metrics',
      ]);
      expect(file[agent].agent_ref).toEqual({ name: agent });
      const want = direct[agent] as Record<string, unknown>;
      expect(file[agent].agent_metrics).toEqual(want.agent_metrics);
      expect(file[agent].key_metrics).toEqual(want.key_metrics);
      expect(file[agent].group_level_metrics).toEqual(want.group_level_metrics);
      expect(file[agent].repeat_level_metrics).toEqual(want.repeat_level_metrics);
      expect(file[agent].repeat_level_metrics).toHaveLength(3); // the sample's 3 repeats
      expect(lines).toContain(`Key metrics for ${agent}:`);
      expect(lines).toContain(JSON.stringify(want.key_metrics, null, 2));
    }
    expect(lines).toContain('Computing aggregate metrics');
    // Then the coverage, as NeMo Gym 0.7.0 reports it: the 4 keys only the sidecars hold.
    const sidecars = result!.excluded.join(', ');
    expect(result!.missing).toBe(4);
    expect(lines.slice(-4)).toEqual([
      `Re-verified rollouts: ${d.output}`,
      `Aggregate metrics: ${metricsPath}`,
      `Rollouts missing from the score: 4 of ${d.all.length + 4} materialized (see ${sidecars})`,
      `Metrics cover: ${d.all.length} of ${d.all.length + 4} rollouts`,
    ]);
  });

  it('works with a resources-server-only config (metrics come from the resources server, not an agent server)', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 8, repeats: 2 });
    const config = join(dir, 'rs-only.yaml');
    writeFileSync(config, stringify({ [RS]: { resources_servers: { mcqa: { host: '127.0.0.1', port: rs.port, entrypoint: 'app.py' } } } }));
    const { result, lines, error } = await aggregate({ inputGlob: d.glob, output: d.output, configs: [config] });
    expect(error).toBeNull();
    expect(lines).toContain(catchAllWarning(RS));
    expect(rs.stats().requests.aggregate_metrics).toBe(2);
    expect(Object.keys(metricsByAgent(result!.metricsPath!)).sort()).toEqual(AGENTS);
  });

  it('a duplicate key across shards is one line naming the key and both places; nothing is written or sent', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 6, repeats: 2 });
    const shard0 = linesOf(d.shardPaths[0]);
    const shard1Lines = linesOf(d.shardPaths[1]).length;
    appendFileSync(d.shardPaths[1], shard0[2] + '\n');
    const key = keyOfLine(shard0[2]);
    const { error } = await aggregate({ inputGlob: d.glob, output: d.output, configs: [d.config] });
    expect(error).toEqual({
      code: 1,
      line:
        `Error: Duplicate key (_ng_task_index, _ng_rollout_index) = (${key.task}, ${key.rollout}) at ${d.shardPaths[0]}:3 and ${d.shardPaths[1]}:${shard1Lines + 1}; ` +
        'each key must appear once across all shards. Remove the duplicate shard or the duplicate row, then run again (nothing was written or sent)',
    });
    expect(rs.stats().requests.aggregate_metrics).toBe(0);
    expect(existsSync(d.output)).toBe(false);
    expect(existsSync(join(dir, 'merged_aggregate_metrics.json'))).toBe(false);
  });

  it('an existing --output or metrics file is refused without --overwrite; a shard under another name always (issue 35)', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 4, repeats: 2 });
    const metrics = join(dir, 'merged_aggregate_metrics.json');
    const sent = rs.stats().requests.aggregate_metrics;
    writeFileSync(d.output, 'earlier merge\n');
    const refused = await aggregate({ inputGlob: d.glob, output: d.output, configs: [d.config] });
    expect(refused.error).toEqual({
      code: 1,
      line: `Error: '${d.output}' already exists: pass --overwrite to replace it, or choose another --output`,
    });
    expect(readFileSync(d.output, 'utf8')).toBe('earlier merge\n');
    // With --no-merge only the metrics file is written: it is the one refused.
    writeFileSync(metrics, '[]\n');
    const noMerge = await aggregate({ inputGlob: d.glob, output: d.output, configs: [d.config], merge: false });
    expect(noMerge.error?.line).toBe(`Error: '${metrics}' already exists: pass --overwrite to replace it, or choose another --output`);
    expect(readFileSync(metrics, 'utf8')).toBe('[]\n');

    // A symlink to a shard is that shard: never replaced, even with --overwrite.
    const link = join(dir, 'link.jsonl');
    symlinkSync(d.shardPaths[0], link);
    const shard = readFileSync(d.shardPaths[0]);
    const aliased = await aggregate({ inputGlob: d.glob, output: link, configs: [d.config], overwrite: true });
    expect(aliased.error).toEqual({
      code: 1,
      line: `Error: --input-glob '${d.shardPaths[0]}' is also the merged output of this command ('${link}'), which it would overwrite: choose another --output`,
    });
    expect(readFileSync(d.shardPaths[0]).equals(shard)).toBe(true);
    // A directory in the way: one line, with or without --overwrite, not a raw EISDIR (issue 35).
    const folder = join(dir, 'folder.jsonl');
    mkdirSync(folder);
    for (const overwrite of [false, true]) {
      const inTheWay = await aggregate({ inputGlob: d.glob, output: folder, configs: [d.config], overwrite });
      expect(inTheWay.error).toEqual({
        code: 1,
        line: `Error: '${folder}' (the merged output of this command) is a directory, not a file: choose another --output`,
      });
    }
    expect(rs.stats().requests.aggregate_metrics).toBe(sent);

    const replaced = await aggregate({ inputGlob: d.glob, output: d.output, configs: [d.config], overwrite: true });
    expect(replaced.error).toBeNull();
    expect(linesOf(d.output)).toHaveLength(d.all.length);
  });

  it('a shard copied under another name is reported as such', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 4, repeats: 2 });
    const copy = join(d.shardDir, 'run_0_copy.jsonl');
    writeFileSync(copy, readFileSync(d.shardPaths[0]));
    const { error } = await aggregate({ inputGlob: d.glob, output: d.output, configs: [d.config] });
    expect(error!.code).toBe(1);
    expect(error!.line).toContain(`all in both ${d.shardPaths[0]} and ${copy}: is one a copy of the other?`);
    expect(rs.stats().requests.aggregate_metrics).toBe(0);
  });

  it('a shard of a NeMo Gym managed run (a manifest beside it) is refused: only selected outcomes are aggregated', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 4, repeats: 2 });
    const manifest = d.shardPaths[1].replace(/\.jsonl$/, '_manifest.json');
    writeFileSync(manifest, JSON.stringify({ schema_version: 2, selection_policy: 'latest_allocated' }));
    const { error } = await aggregate({ inputGlob: d.glob, output: d.output, configs: [d.config] });
    expect(error!.code).toBe(1);
    expect(error!.line).toBe(`Error: ${managedShardRefused(d.shardPaths[1], manifest)}`);
    expect(rs.stats().requests.aggregate_metrics).toBe(0);
    expect(existsSync(d.output)).toBe(false);
    // Its manifest lost: a row's _ng_run_id still tells (the last row only: every row is checked), and it is refused all the same.
    rmSync(manifest);
    const tagged = linesOf(d.shardPaths[1]).map((l, i, all) => (i === all.length - 1 ? l.replace(/^\{/, '{"_ng_run_id":"run-1",') : l));
    writeFileSync(d.shardPaths[1], tagged.join('\n') + '\n');
    const lost = await aggregate({ inputGlob: d.glob, output: d.output, configs: [d.config] });
    expect(tagged.length).toBeGreaterThan(1);
    expect(lost.error!.line).toBe(`Error: ${runTaggedWithoutManifest(d.shardPaths[1], tagged.length)}`);
    expect(existsSync(d.output)).toBe(false);
  });

  it('no match (also: only failures sidecars match) -> the spec message', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 2, repeats: 1 });
    const none = join(dir, 'nothing', '*.jsonl');
    const a = await aggregate({ inputGlob: none, output: d.output, servers: [`${RS}=${rs.url}`] });
    expect(a.error).toEqual({ code: 1, line: `Error: ${noShardsMatched(none)}` });
    const onlyFailures = `${join(d.shardDir, '*_failures.jsonl')}, ${none}`;
    const b = await aggregate({ inputGlob: onlyFailures, output: d.output, servers: [`${RS}=${rs.url}`] });
    expect(b.error).toEqual({ code: 1, line: `Error: ${noShardsMatched(onlyFailures)}` });
    expect(b.lines[0]).toMatch(/^Excluded 2 failures sidecar file\(s\)/);
    expect(rs.stats().requests.aggregate_metrics).toBe(0);
  });

  it('a malformed line -> malformedShard with the 1-based line number; blank lines are skipped', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 3, repeats: 2 });
    const rows = linesOf(d.shardPaths[1]);
    writeFileSync(d.shardPaths[1], `${rows[0]}\n\n${rows[1]}\n{"oops"\n${rows[2]}\n`);
    const { error } = await aggregate({ inputGlob: d.glob, output: d.output, configs: [d.config] });
    expect(error!.code).toBe(1);
    expect(error!.line.startsWith(`Error: ${malformedShard(d.shardPaths[1], 4, '')}`)).toBe(true);
    expect(error!.line.length).toBeGreaterThan(`Error: ${malformedShard(d.shardPaths[1], 4, '')}`.length);
    writeFileSync(d.shardPaths[0], '[1, 2]\n');
    const arr = await aggregate({ inputGlob: d.shardPaths[0], output: d.output, configs: [d.config] });
    expect(arr.error!.line).toBe(`Error: ${malformedShard(d.shardPaths[0], 1, 'expected a JSON object, got an array')}`);
    expect(rs.stats().requests.aggregate_metrics).toBe(0);
  });

  it('a row without both indices is one line with file:line, before anything is sent', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 3, repeats: 2 });
    appendFileSync(d.shardPaths[0], '{"reward":1.0,"agent_ref":{"name":"agent_a"},"_ng_task_index":7}\n');
    const n = linesOf(d.shardPaths[0]).length;
    const { error } = await aggregate({ inputGlob: d.glob, output: d.output, configs: [d.config] });
    expect(error!.code).toBe(1);
    expect(error!.line).toMatch(
      new RegExp(`^Error: ${escapeRegExp(d.shardPaths[0])}:${n}: row has no _ng_task_index or _ng_rollout_index`),
    );
    expect(rs.stats().requests.aggregate_metrics).toBe(0);
  });

  it('rows are copied byte for byte: big integers, 1.0, spacing, key order and CRLF survive', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'shards'));
    const r2 =
      '{"reward": 1.0, "meta": {"id": 12345678901234567891, "z": 1.50}, "_ng_rollout_index":0,"_ng_task_index":2,"agent_ref":{"name":"agent_a"}}';
    const r0 =
      '{"_ng_task_index":0,"_ng_rollout_index":1,"reward":0.0,"big":-98765432109876543210,"agent_ref":{"name":"agent_a"},"note":"é\\u00e9"}';
    const r1 = '{"_ng_task_index":0,"_ng_rollout_index":0,"reward":1.0,"agent_ref":{"name":"agent_b"}}';
    writeFileSync(join(dir, 'shards', 's0.jsonl'), `${r2}\r\n${r0}\n`);
    writeFileSync(join(dir, 'shards', 's1.jsonl'), r1); // no final newline
    const output = join(dir, 'out', 'merged.jsonl'); // parent directory is created
    const { result, error } = await aggregate({ inputGlob: join(dir, 'shards', 's*.jsonl'), output, servers: [`${RS}=${rs.url}`] });
    expect(error).toBeNull();
    expect(readFileSync(output, 'utf8')).toBe(`${r1}\n${r0}\n${r2}\r\n`);
    expect(result!.rows).toBe(3);
    expect(Object.keys(metricsByAgent(result!.metricsPath!)).sort()).toEqual(['agent_a', 'agent_b']);
  });

  it('--no-merge writes only the metrics; the output (and its own files) are never read as shards', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 5, repeats: 2 });
    const inside = join(d.shardDir, 'merged.jsonl');
    const noMerge = await aggregate({ inputGlob: d.glob, output: inside, configs: [d.config], merge: false });
    expect(noMerge.error).toBeNull();
    expect(existsSync(inside)).toBe(false);
    expect(noMerge.result!.output).toBeNull();
    // The result lines, then the coverage report (the shards' sidecars hold 4 keys no row scores).
    expect(noMerge.lines.slice(-4, -2)).toEqual([
      'Re-verified rollouts: not merged (--no-merge)',
      `Aggregate metrics: ${join(d.shardDir, 'merged_aggregate_metrics.json')}`,
    ]);
    expect(noMerge.lines.at(-1)).toBe('Metrics cover: 10 of 14 rollouts');
    const metricsFile = join(d.shardDir, 'merged_aggregate_metrics.json');
    const noMergeMetrics = metricsByAgent(metricsFile);
    // The metrics file exists now: replaced only with --overwrite.
    const first = await aggregate({ inputGlob: d.glob, output: inside, configs: [d.config], overwrite: true });
    expect(first.error).toBeNull();
    expect(metricsByAgent(metricsFile)).toEqual(noMergeMetrics);
    const again = await aggregate({ inputGlob: d.glob, output: inside, configs: [d.config], overwrite: true });
    expect(again.error).toBeNull();
    expect(again.lines).toContain(`Excluded the output's own file(s) matched by --input-glob: ${inside}`);
    expect(again.result!.shards).toEqual(d.shardPaths);
    expect(linesOf(inside)).toHaveLength(d.all.length);
    expect(metricsByAgent(metricsFile)).toEqual(noMergeMetrics);
  });

  it('rows without agent_ref.name are merged but not aggregated; no named row -> no request, no metrics file', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'shards'));
    writeFileSync(
      join(dir, 'shards', 'a.jsonl'),
      '{"_ng_task_index":1,"_ng_rollout_index":0,"reward":1.0}\n{"_ng_task_index":0,"_ng_rollout_index":0,"reward":0.0}\n',
    );
    const output = join(dir, 'merged.jsonl');
    const { result, lines, error } = await aggregate({ inputGlob: join(dir, 'shards', '*.jsonl'), output, servers: [`${RS}=${rs.url}`] });
    expect(error).toBeNull();
    expect(lines).toContain('2 row(s) have no agent_ref.name and no _ng_environment_server: merged, but not aggregated');
    expect(linesOf(output).map(keyOfLine)).toEqual([
      { task: 0, rollout: 0 },
      { task: 1, rollout: 0 },
    ]);
    expect(result!.metricsPath).toBeNull();
    expect(lines.at(-1)).toBe('Aggregate metrics: None');
    expect(rs.stats().requests.aggregate_metrics).toBe(0);
  });

  it('an unreachable resources server is one line, exit 1, after the merge', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 2, repeats: 2 });
    const { error } = await aggregate({ inputGlob: d.glob, output: d.output, servers: [`${RS}=http://127.0.0.1:1`] });
    expect(error!.code).toBe(1);
    expect(error!.line).toMatch(
      /^Error: resources server 'mcqa_rs' at http:\/\/127\.0\.0\.1:1: POST \/aggregate_metrics failed: .*ECONNREFUSED/,
    );
    expect(error!.line).toContain(`the merged rows are in ${d.output}`);
    expect(existsSync(d.output)).toBe(true);
  });
});

describe('duplicate keys are compared like Python, exactly for big integers', () => {
  /** The duplicate found among one-row shards, the same whether the sort spills (every row) or not. */
  async function duplicateOf(rows: string[]) {
    const dir = tempDir();
    const paths = rows.map((r, i) => {
      const p = join(dir, `s${i}.jsonl`);
      writeFileSync(p, r + '\n');
      return p;
    });
    const found = [];
    for (const maxRecords of [undefined, 1]) {
      const finder = new DuplicateKeyFinder({ dir, maxRecords });
      await readShardRows(paths, (_row, place) => finder.add(place));
      found.push(await finder.find());
    }
    expect(found[1]).toEqual(found[0]);
    return found[0];
  }

  it('integers above 2^53 that differ are different keys; equal ones are duplicates', async () => {
    expect(
      await duplicateOf([
        '{"_ng_task_index":9007199254740993,"_ng_rollout_index":0}',
        '{"_ng_task_index":9007199254740992,"_ng_rollout_index":0}',
      ]),
    ).toBeNull();
    const d = await duplicateOf([
      '{"_ng_task_index":9007199254740993,"_ng_rollout_index":0}',
      '{"_ng_task_index":9007199254740992,"_ng_rollout_index":0}',
      '{"_ng_task_index":9007199254740993,"_ng_rollout_index":0}',
    ]);
    expect(d).not.toBeNull();
    expect([d!.first.file, d!.second.file]).toEqual([0, 2]);
  });

  it('a duplicated 20-digit index is printed with its exact digits (JSON.parse would round it)', async () => {
    const dir = tempDir();
    const row = '{"_ng_task_index":12345678901234567891,"_ng_rollout_index":0,"agent_ref":{"name":"agent_a"},"reward":1.0}';
    writeFileSync(join(dir, 's0.jsonl'), row + '\n');
    writeFileSync(join(dir, 's1.jsonl'), row + '\n');
    const { error } = await aggregate({
      inputGlob: join(dir, 's*.jsonl'),
      output: join(dir, 'merged.jsonl'),
      servers: [`${RS}=http://127.0.0.1:1`],
    });
    expect(error?.code).toBe(1);
    expect(error?.line).toContain('= (12345678901234567891, 0) at ');
  });

  it('1, 1.0 and true are one key; "1" is another', async () => {
    expect(
      await duplicateOf(['{"_ng_task_index":1,"_ng_rollout_index":0}', '{"_ng_task_index":1.0,"_ng_rollout_index":0}']),
    ).not.toBeNull();
    expect(
      await duplicateOf(['{"_ng_task_index":true,"_ng_rollout_index":0}', '{"_ng_task_index":1,"_ng_rollout_index":0}']),
    ).not.toBeNull();
    expect(await duplicateOf(['{"_ng_task_index":"1","_ng_rollout_index":0}', '{"_ng_task_index":1,"_ng_rollout_index":0}'])).toBeNull();
  });

  it('reports the lowest duplicated key (ties: the earlier second row), printed as its second row has it, and counts the others', async () => {
    const row = (t: string, r = 0) => `{"_ng_task_index":${t},"_ng_rollout_index":${r}}`;
    const d = await duplicateOf([
      row('5'),
      row('9007199254740993'),
      row('9007199254740992'),
      row('true', 2),
      row('5'),
      row('9007199254740992'),
      row('9007199254740993'),
      row('1', 2),
      row('"1"', 2),
      row('5'),
    ]);
    expect(d).toMatchObject({ key: { task: 1, rollout: 2 }, more: 3, samePair: false });
    expect([d!.first.file, d!.second.file]).toEqual([3, 7]);
    const big = await duplicateOf([row('9007199254740993'), row('9007199254740992'), row('9007199254740992'), row('9007199254740993')]);
    expect([big!.first.file, big!.second.file, big!.more, big!.samePair]).toEqual([1, 2, 1, false]);
    const bools = await duplicateOf([row('1'), row('true')]);
    expect(duplicateKeyMessage(['a', 'b'], bools!)).toContain('= (True, 0) at a:1 and b:1;');
  });
});

describe('reverify aggregate in flat memory (sorts forced to spill to disk)', () => {
  /** Runs the command twice on the same shards, sorting in memory and spilling every 4 records. */
  async function bothWays(d: { glob: string; config: string }, output: (tag: string) => string) {
    const inMemory = await aggregate({ inputGlob: d.glob, output: output('mem'), configs: [d.config] });
    const spilled = await aggregateSpilling({ inputGlob: d.glob, output: output('disk'), configs: [d.config] }, 4);
    return { inMemory, spilled };
  }

  async function aggregateSpilling(raw: Record<string, unknown>, maxRecords: number) {
    const lines: string[] = [];
    try {
      const result = await aggregateCommand(raw, { out: (l) => lines.push(l) }, { maxRecords });
      return { result, lines, error: null as null | { line: string; code: number } };
    } catch (err) {
      return { result: null, lines, error: describeFailure(err) };
    }
  }

  it('merges the same bytes and gets the same metrics as the in-memory sort; leaves no scratch files', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 12, repeats: 3, shards: 3 });
    const outputIn = (tag: string) => {
      mkdirSync(join(dir, tag)); // the scratch directory goes next to the output
      return join(dir, tag, 'merged.jsonl');
    };
    const { inMemory, spilled } = await bothWays(d, outputIn);
    expect(inMemory.error).toBeNull();
    expect(spilled.error).toBeNull();
    expect(readFileSync(join(dir, 'disk', 'merged.jsonl'), 'utf8')).toBe(readFileSync(join(dir, 'mem', 'merged.jsonl'), 'utf8'));
    const direct = await directMetrics(d.all);
    const memMetrics = metricsByAgent(inMemory.result!.metricsPath!);
    const diskMetrics = metricsByAgent(spilled.result!.metricsPath!);
    expect(diskMetrics).toEqual(memMetrics);
    for (const agent of AGENTS) {
      const want = direct[agent] as Record<string, unknown>;
      for (const field of ['agent_metrics', 'key_metrics', 'group_level_metrics', 'repeat_level_metrics'])
        expect(diskMetrics[agent][field]).toEqual(want[field]);
    }
    // The same lines; the key metrics come in completion order, which may differ.
    expect(spilled.lines.map((l) => l.replaceAll('/disk/', '/mem/')).sort()).toEqual([...inMemory.lines].sort());
    for (const tag of ['mem', 'disk'])
      expect(readdirSync(join(dir, tag)).sort()).toEqual(['merged.jsonl', 'merged_aggregate_metrics.json']);
  });

  it('finds the same duplicate, with the same message, as the in-memory sort', async () => {
    const dir = tempDir();
    const d = await shardedRun(dir, { tasks: 10, repeats: 2, shards: 2 });
    const shard0 = linesOf(d.shardPaths[0]);
    appendFileSync(d.shardPaths[1], [shard0[7], shard0[3], shard0[5]].join('\n') + '\n');
    const { inMemory, spilled } = await bothWays(d, (tag) => join(dir, `${tag}.jsonl`));
    expect(inMemory.error!.line).toMatch(/^Error: Duplicate key .* \(and 2 more duplicated keys, all in both /);
    expect(spilled.error).toEqual(inMemory.error);
    expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
    expect(rs.stats().requests.aggregate_metrics).toBe(0);
  });
});

describe('the reverify aggregate subprocess (no Temporal server needed)', () => {
  /** `node bin/reverify.js ...` with TEMPORAL_ADDRESS pointing at a closed port. */
  function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const env = { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' };
      const child = spawn(process.execPath, [reverifyBin, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  }

  it('exit 0 with key metrics and result paths; relative globs and paths', async () => {
    const dir = tempDir();
    await shardedRun(dir, { tasks: 6, repeats: 2 });
    const r = await cli(['aggregate', '--input-glob', 'shards/run_*.jsonl', '-o', 'merged.jsonl', '--config', 'gym.yaml'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Excluded 2 failures sidecar file(s)');
    expect(r.stdout).toContain('Key metrics for agent_a:');
    expect(r.stdout).toContain(`Re-verified rollouts: ${join(dir, 'merged.jsonl')}`);
    expect(r.stdout).toContain(`Aggregate metrics: ${join(dir, 'merged_aggregate_metrics.json')}`);
    expect(linesOf(join(dir, 'merged.jsonl'))).toHaveLength(12);
  });

  it('user errors are one line on stderr with exit 1; --help says no Temporal server is needed', async () => {
    const dir = tempDir();
    await shardedRun(dir, { tasks: 2, repeats: 1 });
    const none = await cli(['aggregate', '-i', 'nope/*.jsonl', '-o', 'm.jsonl', '--config', 'gym.yaml'], dir);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(`Error: No shards matched input_glob='nope/*.jsonl'\n`);
    const dup = await cli(['aggregate', '-i', 'shards/run_0.jsonl,shards/*.jsonl', '-o', 'm.jsonl', '--config', 'gym.yaml'], dir);
    expect(dup.code).toBe(0); // the same file twice is read once
    appendFileSync(join(dir, 'shards', 'run_1.jsonl'), readFileSync(join(dir, 'shards', 'run_0.jsonl')));
    // m.jsonl exists now: replacing it takes --overwrite.
    const exists = await cli(['aggregate', '-i', 'shards/*.jsonl', '-o', 'm.jsonl', '--config', 'gym.yaml'], dir);
    expect(exists.code).toBe(1);
    expect(exists.stderr).toBe(
      `Error: '${join(dir, 'm.jsonl')}' already exists: pass --overwrite to replace it, or choose another --output\n`,
    );
    const dupRow = await cli(['aggregate', '-i', 'shards/*.jsonl', '-o', 'm.jsonl', '--config', 'gym.yaml', '--overwrite'], dir);
    expect(dupRow.code).toBe(1);
    expect(dupRow.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^Error: Duplicate key .* at shards\/run_0\.jsonl:1 and shards\/run_1\.jsonl:2/),
    ]);
    const noServer = await cli(['aggregate', '-i', 'shards/*.jsonl', '-o', 'm.jsonl', '--overwrite'], dir);
    expect(noServer.code).toBe(1);
    expect(noServer.stderr).toBe('Error: no resources server given: pass --config <gym config.yaml> or --server NAME=URL\n');
    const missing = await cli(['aggregate', '-o', 'm.jsonl'], dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("required option '-i, --input-glob <globs>' not specified");
    const help = await cli(['aggregate', '--help'], dir);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('needs no Temporal server');
  });
});
