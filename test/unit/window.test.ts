import { describe, expect, it } from 'vitest';
import { MAX_SHARE, MAX_WINDOW, TARGET_WINDOW, targetWindow, windowShape } from '../../workflows/window.js';

describe('windowShape', () => {
  it('invariants for concurrency 1..200, batch size 1..1000, batches left 1..10', () => {
    const violations: string[] = [];
    let checked = 0;
    for (let c = 1; c <= 200; c++) {
      for (let b = 1; b <= 1000; b++) {
        for (let left = 1; left <= 10; left++) {
          const { window, parallelism } = windowShape(c, b, left);
          checked++;
          const ok =
            Number.isInteger(window) &&
            Number.isInteger(parallelism) &&
            window >= 1 &&
            parallelism >= 1 &&
            window * parallelism <= c &&
            parallelism <= b;
          if (!ok && violations.length < 20) violations.push(`(${c}, ${b}, ${left}) -> window ${window}, parallelism ${parallelism}`);
        }
      }
    }
    expect(checked).toBe(200 * 1000 * 10);
    expect(violations).toEqual([]);
  });

  it('the default batchesLeft aims for TARGET_WINDOW (4) batches in flight', () => {
    expect(TARGET_WINDOW).toBe(4);
    expect(windowShape(32, 200)).toEqual({ window: 4, parallelism: 8 });
    expect(windowShape(32, 200, 10)).toEqual({ window: 4, parallelism: 8 });
    expect(windowShape(64, 500)).toEqual({ window: 4, parallelism: 16 });
    // Above 4 × MAX_SHARE, more batches: 100 over 7 of 14 lanes.
    expect(windowShape(100, 500)).toEqual({ window: 7, parallelism: 14 });
  });

  it('a high concurrency is split over more batches, none given more than MAX_SHARE lanes, at most MAX_WINDOW of them', () => {
    expect([MAX_SHARE, MAX_WINDOW]).toEqual([16, 32]);
    expect(windowShape(64, 1000)).toEqual({ window: 4, parallelism: 16 });
    expect(windowShape(128, 1000)).toEqual({ window: 8, parallelism: 16 });
    expect(targetWindow(256)).toBe(16);
    expect(windowShape(256, 1000)).toEqual({ window: 16, parallelism: 16 });
    expect(windowShape(512, 1000)).toEqual({ window: 32, parallelism: 16 });
    // MAX_WINDOW reached: the shares grow again.
    expect(windowShape(1024, 1000)).toEqual({ window: 32, parallelism: 32 });
    expect(windowShape(4096, 1000)).toEqual({ window: 32, parallelism: 128 });
    // Fewer batches left than the target: the ceiling spreads over them.
    expect(windowShape(256, 1000, 2)).toEqual({ window: 2, parallelism: 128 });
  });

  it('shares rounded down when that sets more of the ceiling to work than rounded up', () => {
    // 1024 over 20 batches: 51 each (1,020 lanes), not 52 (19 batches fit: 988, 36 lanes idle).
    expect(windowShape(1024, 1000, 20)).toEqual({ window: 20, parallelism: 51 });
    // A round's last 3 batches: 341 lanes each (1,023), not 342 (only 2 fit: 684).
    expect(windowShape(1024, 1000, 3)).toEqual({ window: 3, parallelism: 341 });
    for (let c = 1; c <= 300; c++)
      for (let left = 1; left <= 40; left++) {
        const { window, parallelism } = windowShape(c, 1000, left);
        const batches = Math.min(window, left, targetWindow(c));
        // Less than one lane per batch aimed for left idle (batches of 1,000 rows: never bound by their rows).
        expect(c - batches * parallelism).toBeLessThan(Math.min(left, targetWindow(c)));
      }
  });

  it('a small run uses all its concurrency: 16 over 2 batches left', () => {
    const s = windowShape(16, 1000, 2);
    expect(s).toEqual({ window: 2, parallelism: 8 });
    expect(s.window * s.parallelism).toBe(16);
  });

  it('one batch left gets the whole concurrency (bounded by its rows)', () => {
    expect(windowShape(16, 1000, 1)).toEqual({ window: 1, parallelism: 16 });
    expect(windowShape(64, 10, 1)).toEqual({ window: 6, parallelism: 10 });
  });

  it('batches smaller than their share: more batches in flight, never more lanes than rows', () => {
    expect(windowShape(200, 1)).toEqual({ window: 200, parallelism: 1 });
    expect(windowShape(200, 10)).toEqual({ window: 20, parallelism: 10 });
  });

  it('concurrency 1 is one request in flight', () => {
    for (const b of [1, 100]) for (const left of [1, 4, 9]) expect(windowShape(1, b, left)).toEqual({ window: 1, parallelism: 1 });
  });

  it('concurrency below the target window: one request per batch', () => {
    expect(windowShape(3, 100)).toEqual({ window: 3, parallelism: 1 });
  });

  it('batchesLeft 0 (or less) is treated as 1', () => {
    expect(windowShape(16, 1000, 0)).toEqual(windowShape(16, 1000, 1));
  });

  it('is pure: same inputs, same output', () => {
    expect(windowShape(37, 123, 3)).toEqual(windowShape(37, 123, 3));
  });
});
