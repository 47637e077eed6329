/**
 * A loan of `/verify` lanes (activities/lend-lanes.ts) in a worker process that has no row of its
 * round left to lend to moves on: it retires its lanes, then fails with a benign, retryable
 * `LoanMoves` that Temporal retries shortly on the next worker, instead of ending and leaving its
 * share idle for the rest of the round (several worker processes: bench/README.md).
 */
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createActivityDeps } from '../../activities/deps.js';
import { lendLanes, moveDelayMs } from '../../activities/lend-lanes.js';
import { laneGroup, type PooledBatch } from '../../activities/verify-batch/lane-pool.js';
import { FailureType } from '../../src/contract/failure-types.js';

const deps = createActivityDeps();
afterEach(() => deps.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A batch of `rows` rows, each answered after `ms` ms; counts how many run at once and each row's runs. */
function batch(rows: number, ms: number) {
  let next = 0;
  const s = { running: 0, peak: 0, runs: [] as number[] };
  const b: PooledBatch = {
    left: () => rows - next,
    claim: () => {
      if (next >= rows) return null;
      const row = next++;
      return async () => {
        s.running++;
        s.peak = Math.max(s.peak, s.running);
        s.runs[row] = (s.runs[row] ?? 0) + 1;
        await sleep(ms);
        s.running--;
      };
    },
  };
  return { b, s };
}

async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('lendLanes', () => {
  it('moves on at once from a process that runs no batch of its round, its lanes retired, quietly and soon', async () => {
    const env = new MockActivityEnvironment({ attempt: 2 });
    const failure = await failureOf(env.run(lendLanes(deps), { round: 0, lanes: 4 }));
    expect(failure.type).toBe(FailureType.LoanMoves);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.category).toBe(ApplicationFailureCategory.BENIGN);
    expect(failure.nextRetryDelay).toBe(moveDelayMs(2));
    expect(failure.message).not.toContain('\n');
    expect(deps.lanes.lanesOf(laneGroup(env.context.info))).toBe(0);
  });

  it("lends its lanes to this process's batch until it has no row left, then moves on; every row once, within the lanes", async () => {
    const env = new MockActivityEnvironment({ attempt: 1 });
    const group = laneGroup(env.context.info);
    const { b, s } = batch(60, 3);
    const member = deps.lanes.join(group, b, 2);
    const failure = await failureOf(env.run(lendLanes(deps), { round: 0, lanes: 3 }));
    expect(failure.type).toBe(FailureType.LoanMoves);
    expect(b.left()).toBe(0);
    // The loan's lanes retired before it failed: only the batch's own 2 remain.
    expect(deps.lanes.lanesOf(group)).toBe(2);
    await member.leave();
    expect(s.peak).toBeGreaterThan(2);
    expect(s.peak).toBeLessThanOrEqual(5);
    expect(s.runs.filter((n) => n === 1)).toHaveLength(60);
  });

  it('ends without failing once cancelled (the round has ended)', async () => {
    const env = new MockActivityEnvironment({ attempt: 1 });
    const group = laneGroup(env.context.info);
    const { b } = batch(1_000, 5);
    const member = deps.lanes.join(group, b, 1);
    const loan = env.run(lendLanes(deps), { round: 1, lanes: 2 });
    await sleep(30);
    env.cancel();
    await expect(loan).resolves.toBeUndefined();
    await member.leave();
    expect(deps.lanes.lanesOf(group)).toBe(0);
  });

  it('waits a little longer after each move, a second at most', () => {
    expect([1, 2, 3, 4, 5, 6, 20].map(moveDelayMs)).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });
});
