/**
 * Every row read by offset is proven to be the planned row (DESIGN.md "Every read is proven"): a
 * file changed between the plan and the batches that read it (its stamp, or a row's digest) stops
 * the run with one line naming the file, before any wrong row is written; the committed rows are kept; `--resume` re-plans
 * from the files as they are and finishes with every row scored on its own response.
 */
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/hooks.js';
import { readRows, runInProcess } from '../helpers/run-fixtures.js';
import { echo, emptyMetrics, startScriptedServer, type Reply, type Row } from '../helpers/scripted-server.js';
import { lines, writeFixture, type Fixture, type RowSpec } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('changed-inputs');
const server = closedAfterEach(startScriptedServer);

/** Keys t:r for t in [100, 100 + tasks) and r in {0, 1}: lines of one key pair have equal lengths. */
function pairs(tasks: number): RowSpec[] {
  return Array.from({ length: tasks * 2 }, (_, i) => ({ t: 100 + (i >> 1), r: i & 1 }));
}

/**
 * A server that echoes each row's response and holds every request after the first `open` until
 * `release()` (so the test can change a file while the later batches have not read their rows).
 */
async function gatedServer(open: number) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let seen = 0;
  let heldOnce!: () => void;
  const held = new Promise<void>((r) => (heldOnce = r));
  const s = await server({
    aggregate: emptyMetrics,
    verify: async (row: Row): Promise<Reply> => {
      if (++seen > open) {
        heldOnce();
        await gate;
      }
      return echo(row, { reward: 1.0 });
    },
  });
  return { s, release, held };
}

/** Each output row's response is its own key's (`resp_<t>_<r>`), never another row's. */
function expectOwnResponses(path: string): void {
  for (const row of readRows(path)) {
    expect((row.response as { id: string }).id).toBe(`resp_${row._ng_task_index}_${row._ng_rollout_index}`);
  }
}

function swapLines(path: string, a: number, b: number): void {
  const ls = readFileSync(path, 'utf8').split('\n');
  [ls[a - 1], ls[b - 1]] = [ls[b - 1], ls[a - 1]];
  writeFileSync(path, ls.join('\n'));
}

const run = (f: Fixture, url: string, extra: Record<string, unknown> = {}) =>
  runInProcess({
    inputs: f.inputs,
    rollouts: f.rollouts,
    output: f.output,
    servers: [`rs=${url}`],
    batchSize: 50,
    concurrency: 2,
    maxAttempts: 1,
    ...extra,
  });

describe('a file changed after the plan', () => {
  it("rollout lines swapped (equal lengths) mid-run: the run stops naming the file; no row carries another key's response; --resume finishes", async () => {
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: pairs(300) });
    const { s, release, held } = await gatedServer(200);
    const running = run(f, s.url);
    await held;
    // Rows 200.. are not committed yet; lines 501/502 (key 350:0 and 350:1) belong to a batch not started.
    swapLines(f.rollouts, 501, 502);
    release();
    const first = await running;
    expect(first.error?.code).toBe(1);
    // A batch that opens the file finds its stamp changed; one that had it open finds line 501 changed.
    expect(first.error?.line).toMatch(
      new RegExp(`'${f.rollouts}' changed after this run planned it(: line 501 is not the row that was planned)? \\(modified `),
    );
    expect(first.error?.line).toContain('run the same command with --resume; to go on with the file as it is now, add --allow-unsafe');
    const committed = lines(f.output);
    expect(committed.length).toBeGreaterThanOrEqual(200);
    expect(committed.length).toBeLessThan(600);
    expectOwnResponses(f.output);

    // The file's content differs from the digest saved at the plan (start_or_resume): --resume alone is refused.
    const refused = await run(f, s.url, { resume: true });
    expect(refused.error?.line).toMatch(/is not the file this run was started with .* pass --allow-unsafe/);
    expect(lines(f.output).length).toBe(committed.length);
    const again = await run(f, s.url, { resume: true, allowUnsafe: true });
    expect(again.error).toBeNull();
    expect(lines(f.output).slice(0, committed.length)).toEqual(committed); // committed rows untouched
    const out = readRows(f.output);
    expect(out).toHaveLength(600);
    expect(new Set(out.map((r) => `${r._ng_task_index}:${r._ng_rollout_index}`)).size).toBe(600);
    expectOwnResponses(f.output);
  });

  it('a line inserted at the top of the materialized inputs (rows moved): the run stops naming the inputs file, instead of looping on unparseable bytes', async () => {
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: pairs(100) });
    const { s, release, held } = await gatedServer(50);
    const running = run(f, s.url);
    await held;
    writeFileSync(f.inputs, '\n' + readFileSync(f.inputs, 'utf8'));
    release();
    const { error } = await running;
    expect(error?.code).toBe(1);
    expect(error?.line).toMatch(
      new RegExp(
        `'${f.inputs}' changed after this run planned it(: the materialized input of ${f.rollouts}:\\d+ is not the row that was planned)? \\(size \\d+ -> \\d+ bytes`,
      ),
    );
    expectOwnResponses(f.output);
  });

  it('the rollouts file truncated mid-run: the run stops naming the file', async () => {
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: pairs(100) });
    const { s, release, held } = await gatedServer(50);
    const running = run(f, s.url);
    await held;
    truncateSync(f.rollouts, 1000);
    release();
    const { error } = await running;
    expect(error?.code).toBe(1);
    expect(error?.line).toMatch(
      new RegExp(
        `'${f.rollouts}' changed after this run planned it(: line \\d+ is not the row that was planned)? \\(size \\d+ -> 1000 bytes`,
      ),
    );
    expectOwnResponses(f.output);
  });

  it('a file rewritten with the same bytes (a copy over it) mid-run: the next batch stops before it sends a row; --resume finishes', async () => {
    const dir = tempDir();
    const f = writeFixture(dir, { inputs: pairs(100) });
    const { s, release, held } = await gatedServer(50);
    const running = run(f, s.url);
    await held;
    writeFileSync(f.rollouts, readFileSync(f.rollouts));
    release();
    const { error } = await running;
    expect(error?.code).toBe(1);
    expect(error?.line).toContain(`'${f.rollouts}' changed after this run planned it (`);
    expect(error?.line).toContain('no row of it is read or sent any more');
    expectOwnResponses(f.output);
    const again = await run(f, s.url, { resume: true });
    expect(again.error).toBeNull();
    expect(readRows(f.output)).toHaveLength(200);
    expectOwnResponses(f.output);
  });
});
