/**
 * The reference server's `/verify` delay (src/reference-server/verify-route.ts, `latencyOf`):
 * exactly `latencyMs` by default; with `latencySpread` σ, log-normal around it, as judges answer.
 */
import { describe, expect, it } from 'vitest';
import { latencyOf } from '../../src/reference-server/verify-route.js';

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))];

describe('latencyOf', () => {
  it('waits exactly latencyMs without a spread', () => {
    const delay = latencyOf({ latencyMs: 20, latencySpread: 0, seed: 1 });
    expect(Array.from({ length: 5 }, delay)).toEqual([20, 20, 20, 20, 20]);
  });

  it('with spread σ: median latencyMs, the slowest in a hundred about e^(2.33 σ) times it; the same for the same seed', () => {
    const draws = (seed: number) => Array.from({ length: 20_000 }, latencyOf({ latencyMs: 20, latencySpread: 1, seed }));
    const xs = draws(7);
    expect(quantile(xs, 0.5)).toBeGreaterThan(19);
    expect(quantile(xs, 0.5)).toBeLessThan(21);
    const p99 = quantile(xs, 0.99) / 20;
    expect(p99).toBeGreaterThan(Math.exp(2.33) * 0.9);
    expect(p99).toBeLessThan(Math.exp(2.33) * 1.1);
    expect(Math.min(...xs)).toBeGreaterThan(0);
    expect(draws(7)).toEqual(xs);
    expect(draws(8)).not.toEqual(xs);
  });
});
