/**
 * `--dispatch-longest-first` (the seed's `pending(..., dispatch_longest_first)`) end to end: the
 * real CLI and workflow on the shared dev server, a scripted resources server recording the order
 * of `/verify` requests. With one request in flight, the rows go out largest saved row first (ties
 * in file order); the policy is saved with the run (`dispatch_longest_first` in the coverage file),
 * a `--resume` keeps it, `--no-dispatch-longest-first` turns it off, and it cannot be combined with
 * `--order random`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TWO_ORDERS } from '../../src/config/run-options.js';
import { savedLongestFirstNotice, savedPolicyOffNotice } from '../../src/contract/messages.js';
import { closedAfterEach } from '../helpers/hooks.js';
import { runReverify } from '../helpers/run-fixtures.js';
import { byTask, judgeFailed, keyText, reward, startScriptedServer } from '../helpers/scripted-server.js';
import { successLine, tasks, writeFixture } from '../helpers/spec-fixtures.js';
import { tempDir, useSharedTemporal } from '../helpers/temporal-env.js';

useSharedTemporal('dispatch-longest-first');
const server = closedAfterEach(startScriptedServer);

/** Padding (bytes) of each task's saved row: task 3 is the largest, then 1, 5, 2, 0 and 4 (no padding). */
const PAD = [10, 300, 50, 500, 0, 200];

function fixture() {
  const f = writeFixture(tempDir(), {
    inputs: tasks([0, 1, 2, 3, 4, 5]),
    successes: PAD.map((n, t) => successLine({ t }).replace('"expected_answer"', `"pad":"${'x'.repeat(n)}","expected_answer"`)),
  });
  const coverage = () => JSON.parse(readFileSync(f.output.replace(/\.jsonl$/, '_coverage.json'), 'utf8')) as Record<string, unknown>;
  return { f, coverage, coverageFile: f.output.replace(/\.jsonl$/, '_coverage.json') };
}

describe('--dispatch-longest-first', () => {
  it('sends the largest saved rows first, and saves the policy with the run; without it, file order', async () => {
    const s = await server({});
    const { f, coverage } = fixture();
    const args = { inputs: f.inputs, rollouts: f.rollouts, output: f.output, servers: [s.flag('rs')], concurrency: 1 };
    const longest = await runReverify({ ...args, dispatchLongestFirst: true });
    expect(longest.error).toBeNull();
    expect(s.verifyBodies.map(keyText)).toEqual(['3:0', '1:0', '5:0', '2:0', '0:0', '4:0']);
    expect(coverage().dispatch_longest_first).toBe(true);

    s.reset();
    const plain = await runReverify({ ...args, overwrite: true });
    expect(plain.error).toBeNull();
    expect(s.verifyBodies.map(keyText)).toEqual(['0:0', '1:0', '2:0', '3:0', '4:0', '5:0']);
    expect(coverage().dispatch_longest_first).toBe(false);
  });

  it('a resume keeps the saved policy, --no-dispatch-longest-first turns it off, and --order random is refused beside it', async () => {
    // Tasks 1, 3, 5 fail their first two gradings (retryable judge failures).
    const failTwice = (_row: unknown, attempt: number) => (attempt <= 2 ? judgeFailed() : reward(1));
    const s = await server({ verify: byTask({ 1: failTwice, 3: failTwice, 5: failTwice }) });
    const { f, coverage, coverageFile } = fixture();
    const args = {
      inputs: f.inputs,
      rollouts: f.rollouts,
      output: f.output,
      servers: [s.flag('rs')],
      concurrency: 1,
      maxAttempts: 3,
      rejudge: false,
    };
    expect((await runReverify({ ...args, dispatchLongestFirst: true })).error).toBeNull();

    s.reset();
    const kept = await runReverify({ ...args, resume: true });
    expect(kept.error).toBeNull();
    expect(kept.lines).toContain(savedLongestFirstNotice(coverageFile));
    expect(s.verifyBodies.map(keyText)).toEqual(['3:0', '1:0', '5:0']);
    expect(coverage().dispatch_longest_first).toBe(true);

    const random = await runReverify({ ...args, resume: true, order: 'random' });
    expect(random.error).toEqual({ line: `Error: ${TWO_ORDERS}`, code: 1 });

    s.reset();
    const off = await runReverify({ ...args, resume: true, dispatchLongestFirst: false });
    expect(off.error).toBeNull();
    expect(off.lines).toContain(savedPolicyOffNotice('--dispatch-longest-first', coverageFile));
    expect(s.verifyBodies.map(keyText)).toEqual(['1:0', '3:0', '5:0']);
    expect(coverage().dispatch_longest_first).toBe(false);
  });
});
