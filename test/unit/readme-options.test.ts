/** The README's option table of `reverify run` is the declared flags (src/config/run-flags.ts), row for row. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { optionTableMarkdown } from '../../src/config/run-flags.js';
import { projectRoot } from '../helpers/worker-process.js';

describe('README option table', () => {
  it('equals the table generated from the flag declarations', () => {
    const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
    const start = readme.indexOf('| option | meaning | default |');
    expect(start).toBeGreaterThan(0);
    const end = readme.indexOf('\n\n', start);
    expect(readme.slice(start, end)).toBe(optionTableMarkdown());
  });
});
