import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { expandGlob, hasMagic, isFailuresSidecar, matchShardGlobs, segmentRegExp, splitGlobs } from '../../src/aggregation/shard-glob.js';

describe('splitGlobs (§4.15 input_glob)', () => {
  it('splits at commas, trims, drops empty parts', () => {
    expect(splitGlobs(' a/*.jsonl ,b/x.jsonl,, ')).toEqual(['a/*.jsonl', 'b/x.jsonl']);
    expect(splitGlobs('one.jsonl')).toEqual(['one.jsonl']);
    expect(splitGlobs(' , ')).toEqual([]);
  });
});

describe('segmentRegExp (one path segment, Python fnmatch rules)', () => {
  const m = (pattern: string, name: string) => segmentRegExp(pattern).test(name);

  it('* matches any run of characters, ? exactly one', () => {
    expect(m('*.jsonl', 'shard_0.jsonl')).toBe(true);
    expect(m('*.jsonl', '.jsonl')).toBe(true);
    expect(m('*.jsonl', 'shard.json')).toBe(false);
    expect(m('shard_?.jsonl', 'shard_7.jsonl')).toBe(true);
    expect(m('shard_?.jsonl', 'shard_17.jsonl')).toBe(false);
    expect(m('?', 'é')).toBe(true);
    expect(m('?', '😀')).toBe(true); // one code point, not one UTF-16 unit
  });

  it('character classes: sets, ranges, negation with !, ] first is literal', () => {
    expect(m('s_[0-2].jsonl', 's_1.jsonl')).toBe(true);
    expect(m('s_[0-2].jsonl', 's_3.jsonl')).toBe(false);
    expect(m('s_[!0-2].jsonl', 's_3.jsonl')).toBe(true);
    expect(m('s_[!0-2].jsonl', 's_1.jsonl')).toBe(false);
    expect(m('[]]x', ']x')).toBe(true);
    expect(m('[a-]', '-')).toBe(true);
    expect(m('[*]', '*')).toBe(true);
    expect(m('[*]', 'a')).toBe(false);
    expect(m('[^]', '^')).toBe(true); // ^ is not a negation in Python
    expect(m('[z-a]', 'b')).toBe(false); // an empty range matches nothing
  });

  it('regex syntax is literal; an unclosed [ is a literal', () => {
    expect(m('a.b+(c)|{d}$^\\', 'a.b+(c)|{d}$^\\')).toBe(true);
    expect(m('a.b', 'axb')).toBe(false);
    expect(m('x[ab', 'x[ab')).toBe(true);
    expect(m('a-b', 'a-b')).toBe(true);
  });

  it('hasMagic', () => {
    expect(hasMagic('a*')).toBe(true);
    expect(hasMagic('a?')).toBe(true);
    expect(hasMagic('[a]')).toBe(true);
    expect(hasMagic('plain.jsonl')).toBe(false);
  });
});

describe('expandGlob / matchShardGlobs on a directory tree', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'reverify-glob-'));
    mkdirSync(join(dir, 'shards', 'more', 'deep'), { recursive: true });
    mkdirSync(join(dir, 'shards', '.hidden'), { recursive: true });
    mkdirSync(join(dir, 'shards', 'dir.jsonl'), { recursive: true });
    for (const f of ['shards/b.jsonl', 'shards/a.jsonl', 'shards/a_failures.jsonl', 'shards/.dot.jsonl', 'shards/B.jsonl']) {
      writeFileSync(join(dir, f), '');
    }
    writeFileSync(join(dir, 'shards', 'more', 'c.jsonl'), '');
    writeFileSync(join(dir, 'shards', 'more', 'deep', 'd.jsonl'), '');
    writeFileSync(join(dir, 'shards', '.hidden', 'h.jsonl'), '');
    symlinkSync(join(dir, 'shards'), join(dir, 'shards', 'more', 'loop'));
  });

  it('sorts matches by code point and keeps the pattern form (relative to cwd)', async () => {
    expect(await expandGlob('shards/*.jsonl', dir)).toEqual([
      'shards/B.jsonl',
      'shards/a.jsonl',
      'shards/a_failures.jsonl',
      'shards/b.jsonl',
      'shards/dir.jsonl',
    ]);
  });

  it('absolute patterns give absolute paths', async () => {
    expect(await expandGlob(join(dir, 'shards', '?.jsonl'))).toEqual(['B', 'a', 'b'].map((n) => join(dir, 'shards', `${n}.jsonl`)));
  });

  it('hidden names only match a segment starting with a dot', async () => {
    expect(await expandGlob('shards/.*.jsonl', dir)).toEqual(['shards/.dot.jsonl']);
    expect(await expandGlob('shards/*/h.jsonl', dir)).toEqual([]);
    expect(await expandGlob('shards/.hidden/h.jsonl', dir)).toEqual(['shards/.hidden/h.jsonl']);
  });

  it('** matches zero or more directories, without following symlinked directories', async () => {
    expect(await expandGlob('shards/**/*.jsonl', dir)).toEqual([
      'shards/B.jsonl',
      'shards/a.jsonl',
      'shards/a_failures.jsonl',
      'shards/b.jsonl',
      'shards/dir.jsonl',
      'shards/more/c.jsonl',
      'shards/more/deep/d.jsonl',
    ]);
  });

  it('a literal path matches itself when it exists; nothing matches -> []', async () => {
    expect(await expandGlob('shards/a.jsonl', dir)).toEqual(['shards/a.jsonl']);
    expect(await expandGlob('shards/none.jsonl', dir)).toEqual([]);
    expect(await expandGlob('nowhere/*.jsonl', dir)).toEqual([]);
  });

  it('matchShardGlobs: files only, each glob sorted, first occurrence kept across globs', async () => {
    expect(await matchShardGlobs(' shards/b.jsonl , shards/*.jsonl, ./shards/a.jsonl', dir)).toEqual([
      'shards/b.jsonl',
      'shards/B.jsonl',
      'shards/a.jsonl',
      'shards/a_failures.jsonl',
    ]);
  });

  it('isFailuresSidecar', () => {
    expect(isFailuresSidecar('shards/run_0_failures.jsonl')).toBe(true);
    expect(isFailuresSidecar('run_failures.jsonl.bak')).toBe(false);
    expect(isFailuresSidecar('failures/run.jsonl')).toBe(false);
  });
});
