import { linkSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workflowIdForOutput } from '../../src/temporal/workflow-id.js';

const ALLOWED = /^[A-Za-z0-9._-]+$/;

describe('workflowIdForOutput', () => {
  it('is stable for the same absolute path', () => {
    const p = '/data/runs/out.jsonl';
    expect(workflowIdForOutput(p)).toBe(workflowIdForOutput(p));
  });

  it('has the form reverify-<basename>-<16 hex of sha256(absolute path)>', () => {
    const p = '/data/runs/out.jsonl';
    const hash = createHash('sha256').update(p).digest('hex').slice(0, 16);
    expect(workflowIdForOutput(p)).toBe(`reverify-out.jsonl-${hash}`);
  });

  it('relative and absolute spellings of the same file give the same id', () => {
    const abs = resolve('results', 'run.jsonl');
    expect(workflowIdForOutput('results/run.jsonl')).toBe(workflowIdForOutput(abs));
    expect(workflowIdForOutput('./results/../results/run.jsonl')).toBe(workflowIdForOutput(abs));
    expect(workflowIdForOutput(relative(process.cwd(), abs))).toBe(workflowIdForOutput(abs));
    expect(workflowIdForOutput(`/data//runs/./x/../out.jsonl`)).toBe(workflowIdForOutput('/data/runs/out.jsonl'));
  });

  it('different paths give different ids, also with the same basename', () => {
    const ids = new Set(
      [
        '/a/out.jsonl',
        '/b/out.jsonl',
        '/a/out2.jsonl',
        '/a/out.jsonl.bak',
        '/a/Out.jsonl',
        '/a/out jsonl',
        '/a/out_jsonl',
        join('/deep', 'x'.repeat(200), 'out.jsonl'),
      ].map(workflowIdForOutput),
    );
    expect(ids.size).toBe(8);
  });

  it('names whose sanitized forms collide still differ (the hash tells them apart)', () => {
    expect(workflowIdForOutput('/r/a b.jsonl')).not.toBe(workflowIdForOutput('/r/a_b.jsonl'));
    expect(workflowIdForOutput('/r/ü.jsonl')).not.toBe(workflowIdForOutput('/r/é.jsonl'));
  });

  it('only [A-Za-z0-9._-] characters, whatever the file name', () => {
    const names = [
      'out.jsonl',
      'my run (v2).jsonl',
      'résultats 日本語 😀.jsonl',
      'a:b*c?"d<e>f|g.jsonl',
      'tab\tnew\nline',
      "q'uo`te$",
      '%41+&=#',
    ];
    for (const n of names) {
      const id = workflowIdForOutput(`/tmp/x/${n}`);
      expect(id, n).toMatch(ALLOWED);
      expect(id.startsWith('reverify-'), n).toBe(true);
    }
  });

  it('length <= 255, even for a very long file name and path', () => {
    const longName = `${'n'.repeat(1000)}.jsonl`;
    const longDir = Array.from({ length: 50 }, (_, i) => `dir${i}${'d'.repeat(40)}`).join(sep);
    for (const p of [`/${longName}`, `/${longDir}/${longName}`, `/${longDir}/${'日'.repeat(500)}`]) {
      const id = workflowIdForOutput(p);
      expect(id.length).toBeLessThanOrEqual(255);
      expect(id).toMatch(ALLOWED);
    }
  });

  it('long names that share their first 80 characters still differ', () => {
    const stem = 'p'.repeat(100);
    expect(workflowIdForOutput(`/r/${stem}A.jsonl`)).not.toBe(workflowIdForOutput(`/r/${stem}B.jsonl`));
  });

  it('an output reached through a symlinked directory has the same id as through the real one', () => {
    const real = mkdtempSync(join(tmpdir(), 'wfid-real-'));
    const link = `${real}-link`;
    symlinkSync(real, link);
    expect(workflowIdForOutput(join(link, 'out.jsonl'))).toBe(workflowIdForOutput(join(real, 'out.jsonl')));
  });

  it('an output that is a symlink to a file has the id of the file (issue 35)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfid-file-'));
    writeFileSync(join(dir, 'real.jsonl'), '');
    symlinkSync(join(dir, 'real.jsonl'), join(dir, 'link.jsonl'));
    expect(workflowIdForOutput(join(dir, 'link.jsonl'))).toBe(workflowIdForOutput(join(dir, 'real.jsonl')));
  });

  it('is the same before and after the output is created: a dangling symlink, a directory not made yet', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfid-later-'));
    symlinkSync('real.jsonl', join(dir, 'link.jsonl'));
    symlinkSync(dir, `${dir}-alias`);
    const link = join(dir, 'link.jsonl');
    const deep = join(`${dir}-alias`, 'new', 'out.jsonl');
    const before = [workflowIdForOutput(link), workflowIdForOutput(deep)];
    expect(before[0]).toBe(workflowIdForOutput(join(dir, 'real.jsonl')));
    writeFileSync(join(dir, 'real.jsonl'), '');
    mkdirSync(join(dir, 'new'));
    writeFileSync(join(dir, 'new', 'out.jsonl'), '');
    expect([workflowIdForOutput(link), workflowIdForOutput(deep)]).toEqual(before);
    expect(before[1]).toBe(workflowIdForOutput(join(dir, 'new', 'out.jsonl')));
  });

  it('a hard-linked output (one file, two names) is refused with one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfid-hard-'));
    writeFileSync(join(dir, 'real.jsonl'), '');
    linkSync(join(dir, 'real.jsonl'), join(dir, 'hard.jsonl'));
    expect(() => workflowIdForOutput(join(dir, 'hard.jsonl'))).toThrow(/^--output '.*hard\.jsonl' is a file with 2 names \(hard links\)/);
  });
});
