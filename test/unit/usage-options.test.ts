/** The option table of `reverify run` in docs/usage.md is the declared flags (src/config/run-flags.ts), row for row. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { optionTableMarkdown } from '../../src/config/run-flags.js';
import { projectRoot } from '../helpers/worker-process.js';

describe('docs/usage.md option table', () => {
  it('equals the table generated from the flag declarations', () => {
    const page = readFileSync(join(projectRoot, 'docs', 'usage.md'), 'utf8');
    const start = page.indexOf('| option | meaning | default |');
    expect(start).toBeGreaterThan(0);
    const end = page.indexOf('\n\n', start);
    expect(page.slice(start, end)).toBe(optionTableMarkdown());
  });
});
