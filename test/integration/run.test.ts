import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startReferenceServer } from '../../src/reference-server/server.js';
import { keysOf, readRows, runReverify as run, sampleRun, useReferenceServer } from '../helpers/run-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';
import { escapeRegExp } from '../helpers/regexp.js';

useSharedTemporal('run');
const rs = useReferenceServer({ port: 0, judgeFailRate: 0.1, seed: 5 });

describe('reverify run end to end (real Temporal dev server, real resources server)', () => {
  it('writes every key exactly once to the output or the sidecar, stamped, with aggregate metrics per agent', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 30, repeats: 4 });
    const { result, lines, error } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      concurrency: 6,
      batchSize: 16,
    });
    expect(error).toBeNull();
    const main = readRows(d.output);
    const side = readRows(join(dir, 'out_failures.jsonl'));
    const all = [...keysOf(main), ...keysOf(side)];
    expect(all).toHaveLength(120);
    expect(new Set(all).size).toBe(120);
    expect(side.length).toBeGreaterThan(0); // judgeFailRate 0.1
    for (const r of side) expect(r._ng_failure_class).toBe('judge_failed');
    for (const r of main) {
      expect(r._ng_failure_class).toBeUndefined();
      expect(typeof (r.agent_ref as { name: string }).name).toBe('string');
      expect(typeof r.reward).toBe('number');
    }
    expect(result!.done).toBe(main.length);
    expect(result!.failed).toBe(side.length);
    expect(lines).toContain('Verifying with 6 concurrent requests');
    expect(lines).toContain(`Re-verified rollouts: ${d.output}`);

    const metrics = JSON.parse(readFileSync(join(dir, 'out_aggregate_metrics.json'), 'utf8'));
    expect(metrics.map((m: { agent_ref: { name: string } }) => m.agent_ref.name).sort()).toEqual(['agent_a', 'agent_b']);
    for (const entry of metrics) {
      const rows = main.filter((r) => (r.agent_ref as { name: string }).name === entry.agent_ref.name);
      const mean = rows.reduce((a, r) => a + (r.reward as number), 0) / rows.length;
      expect(entry.key_metrics['mean/reward']).toBeCloseTo(mean, 12);
      expect(Object.keys(entry)).toEqual(['agent_ref', 'agent_metrics', 'key_metrics', 'group_level_metrics', 'repeat_level_metrics']);
      expect(entry.repeat_level_metrics.map((r: { _ng_rollout_index: number }) => r._ng_rollout_index)).toEqual([0, 1, 2, 3]);
    }
    expect(existsSync(join(dir, '.out.jsonl.reverify'))).toBe(false);
  });

  it('never has more /verify requests in flight than --concurrency', async () => {
    const slow = await startReferenceServer({ port: 0, latencyMs: 15, seed: 1 });
    try {
      const dir = tempDir();
      const d = await sampleRun(dir, slow.port, { tasks: 40, repeats: 3 });
      const { error } = await run({
        inputs: d.inputsPath,
        rollouts: d.rolloutsPath,
        output: d.output,
        configs: [d.config],
        concurrency: 5,
        batchSize: 10,
      });
      expect(error).toBeNull();
      const stats = slow.stats();
      expect(stats.requests.verify).toBe(120);
      expect(stats.peak_verify_in_flight).toBeLessThanOrEqual(5);
      expect(stats.peak_verify_in_flight).toBeGreaterThanOrEqual(3);
    } finally {
      await slow.close();
    }
  });

  it("lends an ended batch's share to the round's last batch, never above --concurrency, every row once", async () => {
    // 120 rows in batches of 25: batches 1-4 start with 2 lanes each; batch 5 starts with the share
    // of the first to end, and the shares of the three others, ending with it, are lent to it.
    const slow = await startReferenceServer({ port: 0, latencyMs: 15, seed: 3 });
    try {
      const dir = tempDir();
      const d = await sampleRun(dir, slow.port, { tasks: 40, repeats: 3 });
      const { error, result } = await run({
        inputs: d.inputsPath,
        rollouts: d.rolloutsPath,
        output: d.output,
        configs: [d.config],
        concurrency: 8,
        batchSize: 25,
      });
      expect(error).toBeNull();
      expect(result!.done + result!.failed).toBe(120);
      const stats = slow.stats();
      expect(stats.requests.verify).toBe(120);
      expect(stats.verify_repeats).toBe(0);
      expect(stats.peak_verify_in_flight).toBeLessThanOrEqual(8);
      expect(new Set(keysOf(readRows(d.output))).size).toBe(120);
      const history = JSON.parse(readFileSync(join(dir, 'out_history.json'), 'utf8')) as {
        runs: Array<{ history: { events: Array<{ activityTaskScheduledEventAttributes?: { activityType?: { name?: string } } }> } }>;
      };
      const scheduled = history.runs.flatMap((r) =>
        r.history.events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name),
      );
      expect(scheduled.filter((n) => n === 'verifyBatch')).toHaveLength(5);
      expect(scheduled.filter((n) => n === 'lendLanes').length).toBeGreaterThanOrEqual(1);
    } finally {
      await slow.close();
    }
  });

  it('refuses an existing output without --overwrite and leaves it untouched; --overwrite replaces it', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 5, repeats: 2 });
    writeFileSync(d.output, 'old\n');
    const base = { inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] };
    const refused = await run(base);
    expect(refused.error).toEqual({
      line: `Error: Output file already exists: '${d.output}'. Pass --overwrite to delete it and start fresh, or --resume to continue from it.`,
      code: 1,
    });
    expect(readFileSync(d.output, 'utf8')).toBe('old\n');
    const replaced = await run({ ...base, overwrite: true });
    expect(replaced.error).toBeNull();
    expect(replaced.lines).toContain(`Deleted existing output file: '${d.output}'`);
    expect(readFileSync(d.output, 'utf8')).not.toContain('old');
  });

  it('refuses a sidecar that exists alone (§6.85)', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 3, repeats: 1 });
    writeFileSync(join(dir, 'out_failures.jsonl'), '');
    const { error } = await run({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
    expect(error?.line).toContain(`Output file already exists: '${join(dir, 'out_failures.jsonl')}'`);
    expect(existsSync(d.output)).toBe(false);
  });

  it('stops at malformed input with file:line before any /verify request, writing nothing', async () => {
    const counting = await startReferenceServer({ port: 0 });
    try {
      const dir = tempDir();
      const d = await sampleRun(dir, counting.port, { tasks: 4, repeats: 2 });
      const lines = readFileSync(d.rolloutsPath, 'utf8').split('\n');
      lines[2] = lines[2].slice(0, 40);
      writeFileSync(d.rolloutsPath, lines.join('\n'));
      const { error } = await run({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
      expect(error?.code).toBe(1);
      expect(error?.line).toMatch(new RegExp(`^Error: ${escapeRegExp(d.rolloutsPath)}:3: malformed JSON`));
      expect(counting.stats().requests.verify).toBe(0);
      expect(existsSync(d.output)).toBe(false);
      expect(existsSync(join(dir, '.out.jsonl.reverify'))).toBe(false);
    } finally {
      await counting.close();
    }
  });

  it('reports a rollout without a materialized input row, naming file:line and the key', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 3, repeats: 2 });
    const inputs = readFileSync(d.inputsPath, 'utf8')
      .split('\n')
      .filter((l) => l.trim());
    writeFileSync(d.inputsPath, inputs.slice(1).join('\n') + '\n'); // drop key (0, 0)
    const rolloutLines = readFileSync(d.rolloutsPath, 'utf8').split('\n');
    const lineNo = rolloutLines.findIndex((l) => l.includes('"_ng_task_index":0,"_ng_rollout_index":0')) + 1;
    const { error } = await run({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
    expect(error?.code).toBe(1);
    expect(error?.line).toContain(`${d.rolloutsPath}:${lineNo}:`);
    expect(error?.line).toContain('No matching materialized input row found for rollout row');
    expect(existsSync(d.output)).toBe(false);
  });

  it('guard: an unknown reverify_mode fails without --force; with --force writes unsafe_ files and warns twice', async () => {
    const unknown = await startReferenceServer({ port: 0, mode: 'unknown' });
    try {
      const dir = tempDir();
      const d = await sampleRun(dir, unknown.port, { tasks: 3, repeats: 2 });
      const base = { inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] };
      const refused = await run(base);
      expect(refused.error).toEqual({
        line: "Error: Resource server(s) ['mcqa_rs'] have reverify_mode=UNSUPPORTED or UNKNOWN. Rewards computed by reverification may be incorrect. Pass ++force=true to override (output will be prefixed with 'unsafe_'). With reverify, pass --force.",
        code: 1,
      });
      expect(unknown.stats().requests.verify).toBe(0);
      expect(existsSync(d.output)).toBe(false);

      const forced = await run({ ...base, force: true });
      expect(forced.error).toBeNull();
      const warning =
        "WARNING: resource server(s) ['mcqa_rs'] have reverify_mode=UNSUPPORTED or UNKNOWN. Rewards computed by reverification may be incorrect. Output is prefixed with 'unsafe_'.";
      expect(forced.lines.filter((l) => l === warning)).toHaveLength(2);
      expect(forced.lines[forced.lines.length - 1]).toBe(warning);
      expect(existsSync(join(dir, 'unsafe_out.jsonl'))).toBe(true);
      expect(existsSync(join(dir, 'unsafe_out_failures.jsonl'))).toBe(true);
      expect(existsSync(join(dir, 'unsafe_out_aggregate_metrics.json'))).toBe(true);
      expect(existsSync(d.output)).toBe(false);
    } finally {
      await unknown.close();
    }
  });

  it('a server that is not reachable at start is one clear line, exit 1', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, 9, { tasks: 2, repeats: 1 }); // port 9 (discard): nothing listens
    const { error } = await run({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
    expect(error?.code).toBe(1);
    expect(error?.line).toContain("'mcqa_rs'");
    expect(error?.line).toContain('not reachable');
    expect(existsSync(d.output)).toBe(false);
  });

  it('--limit verifies only the first N rollouts of the file', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 10, repeats: 2 });
    const { result, error } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      limit: 7,
    });
    expect(error).toBeNull();
    const firstSeven = keysOf(readRows(d.rolloutsPath).slice(0, 7)).sort();
    const written = [...keysOf(readRows(d.output)), ...keysOf(readRows(join(dir, 'out_failures.jsonl')))].sort();
    expect(written).toEqual(firstSeven);
    expect(result!.planned).toBe(7);
  });

  it('--disable-aggregation writes no metrics file and prints the notice', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 3, repeats: 2 });
    const { lines, error } = await run({
      inputs: d.inputsPath,
      rollouts: d.rolloutsPath,
      output: d.output,
      configs: [d.config],
      disableAggregation: true,
    });
    expect(error).toBeNull();
    expect(existsSync(join(dir, 'out_aggregate_metrics.json'))).toBe(false);
    expect(lines.some((l) => l.startsWith('Skipping aggregate-metrics computation because disable_aggregation=True.'))).toBe(true);
    expect(lines).toContain('Aggregate metrics: None');
  });

  it('an output directory that cannot be created is one line, exit 1', async () => {
    const dir = tempDir();
    const d = await sampleRun(dir, rs().port, { tasks: 2, repeats: 1 });
    const output = join(d.config, 'out.jsonl'); // a path below a regular file
    const { error } = await run({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output, configs: [d.config] });
    expect(error?.code).toBe(1);
    expect(error?.line).toMatch(
      /^Error: cannot write the output directory '.*gym\.yaml' \(a file is in the way\): choose another --output$/,
    );
  });

  it('an agent name the config does not route is reported with file:line before any request', async () => {
    const counting = await startReferenceServer({ port: 0 });
    try {
      const dir = tempDir();
      const d = await sampleRun(dir, counting.port, { tasks: 3, repeats: 1 });
      const lines = readFileSync(d.inputsPath, 'utf8').split('\n');
      lines[1] = lines[1].replace(/"name":"agent_[ab]"/, '"name":"agent_typo"');
      writeFileSync(d.inputsPath, lines.join('\n'));
      const { error } = await run({ inputs: d.inputsPath, rollouts: d.rolloutsPath, output: d.output, configs: [d.config] });
      expect(error?.code).toBe(1);
      expect(error?.line).toContain(`${d.inputsPath}:2:`);
      expect(error?.line).toContain("agent_ref.name='agent_typo'");
      expect(counting.stats().requests.verify).toBe(0);
      expect(existsSync(d.output)).toBe(false);
    } finally {
      await counting.close();
    }
  });
});
