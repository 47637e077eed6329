import { describe, expect, it } from 'vitest';
import { InputIndex } from '../../activities/input-index.js';

const place = (i: number) => ({
  offset: 2 ** 33 + i * 1013,
  length: (i * 7) % 2 ** 32,
  agent: i % 65_536,
  server: (i * 3) % 65_536,
});

describe('InputIndex', () => {
  it('set then get returns the place; size counts distinct keys', () => {
    const ix = new InputIndex();
    expect(ix.size).toBe(0);
    ix.set('t1|r0', 0, 17, 0, 0);
    ix.set('t1|r1', 18, 25, 1, 2);
    expect(ix.get('t1|r0')).toEqual({ offset: 0, length: 17, agent: 0, server: 0 });
    expect(ix.get('t1|r1')).toEqual({ offset: 18, length: 25, agent: 1, server: 2 });
    expect(ix.size).toBe(2);
  });

  it('an unknown key gives undefined (also on an empty index, and for prototype names)', () => {
    const ix = new InputIndex();
    expect(ix.get('nope')).toBeUndefined();
    ix.set('a', 1, 2, 3, 4);
    expect(ix.get('b')).toBeUndefined();
    expect(ix.get('')).toBeUndefined();
    expect(ix.get('constructor')).toBeUndefined();
    expect(ix.get('__proto__')).toBeUndefined();
  });

  it('the last duplicate wins, and a duplicate does not take a new slot', () => {
    const ix = new InputIndex();
    ix.set('k', 10, 5, 1, 1);
    ix.set('other', 20, 6, 2, 2);
    ix.set('k', 99, 7, 3, 4);
    expect(ix.get('k')).toEqual({ offset: 99, length: 7, agent: 3, server: 4 });
    expect(ix.get('other')).toEqual({ offset: 20, length: 6, agent: 2, server: 2 });
    expect(ix.size).toBe(2);
  });

  it('extreme values are kept exactly: offsets beyond 2^32, max uint32 length, max uint16 agent/server', () => {
    const ix = new InputIndex();
    ix.set('big', 2 ** 40 + 3, 2 ** 32 - 1, 65_535, 65_535);
    ix.set('safe', Number.MAX_SAFE_INTEGER, 0, 0, 0);
    expect(ix.get('big')).toEqual({ offset: 2 ** 40 + 3, length: 2 ** 32 - 1, agent: 65_535, server: 65_535 });
    expect(ix.get('safe')).toEqual({ offset: Number.MAX_SAFE_INTEGER, length: 0, agent: 0, server: 0 });
  });

  it('growth beyond 1024 entries (several doublings) keeps every earlier entry exact', () => {
    const ix = new InputIndex();
    const n = 10_000;
    const bad: number[] = [];
    for (let i = 0; i < n; i++) {
      ix.set(`key-${i}`, place(i).offset, place(i).length, place(i).agent, place(i).server);
      // the entries around the first growth are checked as soon as it happened
      if (i === 1024) for (const j of [0, 1, 1022, 1023, 1024]) expect(ix.get(`key-${j}`)).toEqual(place(j));
    }
    expect(ix.size).toBe(n);
    for (let i = 0; i < n; i++) {
      const got = ix.get(`key-${i}`);
      const want = place(i);
      if (!got || got.offset !== want.offset || got.length !== want.length || got.agent !== want.agent || got.server !== want.server) bad.push(i);
    }
    expect(bad).toEqual([]);
  });

  it('a duplicate of an early key after growth replaces it in place', () => {
    const ix = new InputIndex();
    for (let i = 0; i < 3000; i++) ix.set(`k${i}`, i, i, i % 100, 0);
    ix.set('k5', 123_456, 9, 7, 8);
    ix.set('k2999', 1, 2, 3, 4);
    expect(ix.size).toBe(3000);
    expect(ix.get('k5')).toEqual({ offset: 123_456, length: 9, agent: 7, server: 8 });
    expect(ix.get('k2999')).toEqual({ offset: 1, length: 2, agent: 3, server: 4 });
    expect(ix.get('k4')).toEqual({ offset: 4, length: 4, agent: 4, server: 0 });
    expect(ix.get('k6')).toEqual({ offset: 6, length: 6, agent: 6, server: 0 });
  });

  it('get returns a copy: mutating it does not change the index', () => {
    const ix = new InputIndex();
    ix.set('a', 1, 2, 3, 4);
    const got = ix.get('a')!;
    got.offset = 999;
    expect(ix.get('a')).toEqual({ offset: 1, length: 2, agent: 3, server: 4 });
  });
});
