/**
 * Every activity the workflow schedules and every timer it starts carries a summary: the Temporal
 * UI's timeline names each step (`verify rows 0..249 (batch 1/12)`, `wait 2s (3s after round 1's
 * last judge failure) before re-judgment round 2`) instead of a bare activity type or `2 (10s)`. Read from the source, so a new call
 * without one fails here before any run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../helpers/worker-process.js';

const dir = join(projectRoot, 'workflows');
const sources = readdirSync(dir)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, text: readFileSync(join(dir, f), 'utf8') }));
/** The activity proxies of workflows/activity-proxies.ts. */
const PROXIES = ['quick', 'long', 'loan', 'cleanup', 'aggregation', 'upload'];

describe('summaries in the Temporal UI', () => {
  it('every activity is called with options that carry a summary (executeWithOptions), never bare', () => {
    const bare = new RegExp(`\\b(?:${PROXIES.join('|')})\\.(\\w+)\\(`, 'g');
    const found = sources.flatMap(({ file, text }) => [...text.matchAll(bare)].map((m) => `${file}: ${m[0]}`));
    expect(found).toEqual([]);
    const calls = sources.flatMap(({ file, text }) =>
      [...text.matchAll(/\.executeWithOptions\(\s*([^,[]+)/g)].map((m) => ({ file, options: m[1].trim() })),
    );
    expect(calls.length).toBeGreaterThan(10);
    // Inline options name their summary; the others are built by a function that sets one (batch-request.ts).
    for (const c of calls) expect(c.options, c.file).toMatch(/summary|Options\(/);
  });

  it('every timer has a summary', () => {
    const sleeps = sources.flatMap(({ file, text }) => [...text.matchAll(/\bsleep\(([^;]*)\);/g)].map((m) => `${file}: ${m[1]}`));
    expect(sleeps.length).toBeGreaterThan(0);
    for (const s of sleeps) expect(s).toContain('summary');
    const timedConditions = sources.flatMap(({ file, text }) =>
      [...text.matchAll(/\bcondition\(([^;]*)\);/g)].filter((m) => m[1].includes(',')).map((m) => `${file}: ${m[1]}`),
    );
    for (const c of timedConditions) expect(c).toContain('summary');
  });
});
