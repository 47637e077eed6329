import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, HEAP_GROWTH_FLAGS, limitHeapGrowth } from '../../src/cli/heap-growth.js';

// The V8 flags every reverify process sets at start (src/cli/main.ts). V8 ignores a flag it does
// not know without a word, so each must be one this Node's V8 lists.

describe('limitHeapGrowth', () => {
  it('sets the heap growing factor to ×2, by a flag this Node accepts', () => {
    const set: string[] = [];
    limitHeapGrowth((flag) => set.push(flag));
    expect(set).toEqual(['--heap-growing-percent=100']);
    expect(HEAP_GROWING_PERCENT).toBe(100);
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    for (const flag of HEAP_GROWTH_FLAGS) expect(known).toContain(`  ${flag.slice(0, flag.indexOf('='))} (`);
  });
});
