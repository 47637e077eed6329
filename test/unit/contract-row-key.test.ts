import { describe, expect, it } from 'vitest';
import {
  compareKeys,
  formatKey,
  formatKeyExactly,
  formatLineKey,
  keyId,
  keyOf,
  keyWithNullDefaults,
  lineKey,
  lineKeyId,
  rawKeyId,
  type RowKey,
} from '../../src/contract/row-key.js';

const k = (task: RowKey['task'], rollout: RowKey['rollout']): RowKey => ({ task, rollout });

describe('keyOf', () => {
  it('reads both indices', () => {
    expect(keyOf({ _ng_task_index: 3, _ng_rollout_index: 7, x: 1 })).toEqual(k(3, 7));
  });

  it('is null when either index is missing or null (both-indices rule)', () => {
    expect(keyOf({ _ng_task_index: 3 })).toBeNull();
    expect(keyOf({ _ng_rollout_index: 3 })).toBeNull();
    expect(keyOf({ _ng_task_index: null, _ng_rollout_index: 0 })).toBeNull();
    expect(keyOf({})).toBeNull();
  });

  it('is null for indices Python could not hash (objects, lists)', () => {
    expect(keyOf({ _ng_task_index: [1], _ng_rollout_index: 0 })).toBeNull();
  });

  it('keyWithNullDefaults reads missing indices as null (recovery predicate)', () => {
    expect(keyWithNullDefaults({ _ng_task_index: 2 })).toEqual(k(2, null));
  });
});

describe('§6.51–53 parsing output lines', () => {
  it('§6.51 a row with T=3, R=7 has key (3, 7)', () => {
    expect(lineKey('{"_ng_task_index":3,"_ng_rollout_index":7,"reward":1.0}')).toEqual(k(3, 7));
  });

  it('§6.52 a trailing newline is still parsed', () => {
    expect(lineKey('{"_ng_task_index":3,"_ng_rollout_index":7}\n')).toEqual(k(3, 7));
    expect(lineKeyId('{"_ng_task_index":3,"_ng_rollout_index":7}\r\n')).toBe(keyId(k(3, 7)));
  });

  it('§6.53 a row without indices has no key; blank lines have none either', () => {
    expect(lineKey('{"reward":1.0}')).toBeNull();
    expect(lineKey('{"_ng_task_index":1}')).toBeNull();
    expect(lineKey('   \n')).toBeNull();
    expect(lineKeyId('')).toBeNull();
    expect(lineKeyId('{"_ng_task_index":null,"_ng_rollout_index":0}')).toBeNull();
  });
});

describe('keyId: Python equality of keys', () => {
  it('1 and 1.0 are the same key; "1" is different', () => {
    expect(keyId(k(1, 0))).toBe(keyId(k(1.0, 0)));
    expect(keyId(k('1', 0))).not.toBe(keyId(k(1, 0)));
  });

  it('True equals 1 and False equals 0, as in Python', () => {
    expect(keyId(k(true, false))).toBe(keyId(k(1, 0)));
  });

  it('null differs from 0 and from "z"', () => {
    expect(keyId(k(null, 0))).not.toBe(keyId(k(0, 0)));
    expect(keyId(k('z', 0))).not.toBe(keyId(k(null, 0)));
  });

  it('does not confuse parts across the pair', () => {
    expect(keyId(k('a","b', 'c'))).not.toBe(keyId(k('a', 'b","c')));
    expect(keyId(k(12, 3))).not.toBe(keyId(k(1, 23)));
  });

  it('rawKeyId matches keyId for exact values and keeps big integers apart', () => {
    expect(rawKeyId('3', '1.0')).toBe(keyId(k(3, 1)));
    expect(rawKeyId('true', '"x"')).toBe(keyId(k(1, 'x')));
    expect(rawKeyId('1e2', '0')).toBe(keyId(k(100, 0)));
    expect(rawKeyId('12345678901234567890', '0')).not.toBe(rawKeyId('12345678901234567891', '0'));
    expect(rawKeyId('null', '0')).toBeNull();
    expect(rawKeyId('[1]', '0')).toBeNull();
  });

  it('§6.62 key granularity is the full pair: (0,0) does not cover (0,1)', () => {
    const done = new Set([keyId(k(0, 0))]);
    expect([k(0, 0), k(0, 1), k(0, 2)].filter((x) => !done.has(keyId(x)))).toEqual([k(0, 1), k(0, 2)]);
  });
});

describe('§6.27–28 join by key', () => {
  const inputs = [
    '{"task":"t0","_ng_task_index":0,"_ng_rollout_index":0,"agent_ref":{"name":"a"}}',
    '{"task":"t0","_ng_task_index":0,"_ng_rollout_index":1,"agent_ref":{"name":"a"}}',
    '{"task":"t1","_ng_task_index":1,"_ng_rollout_index":0,"agent_ref":{"name":"a"}}',
  ];
  const index = new Map(inputs.map((line) => [lineKeyId(line)!, line]));

  it('§6.27 pairs follow the rollouts file and match by key', () => {
    const rollouts = ['{"_ng_task_index":0,"_ng_rollout_index":0}', '{"_ng_task_index":1,"_ng_rollout_index":0}'];
    expect(rollouts.map((r) => index.get(lineKeyId(r)!))).toEqual([inputs[0], inputs[2]]);
  });

  it('§6.28/§6.32 a different order still matches by the full (T, R) key', () => {
    const rollouts = [
      '{"_ng_rollout_index":0,"_ng_task_index":1}',
      '{"_ng_task_index":0,"_ng_rollout_index":1.0}',
      '{"_ng_task_index":0,"_ng_rollout_index":0}',
    ];
    expect(rollouts.map((r) => index.get(lineKeyId(r)!))).toEqual([inputs[2], inputs[1], inputs[0]]);
  });
});

describe('formatKey and compareKeys', () => {
  it('formats keys as Python tuples', () => {
    expect(formatKey(k(3, 1))).toBe('(3, 1)');
    expect(formatKey(k('a', null))).toBe("('a', None)");
    expect(formatKey(k(true, 1.5))).toBe('(True, 1.5)');
  });

  it('formats 20-digit indices with their exact digits, from the line or the exact key id', () => {
    const line = '{"_ng_task_index": 12345678901234567891, "_ng_rollout_index": -98765432109876543210, "x": 1}';
    expect(formatLineKey(line)).toBe('(12345678901234567891, -98765432109876543210)');
    expect(formatLineKey('{"_ng_task_index":true,"_ng_rollout_index":"r"}')).toBe("(True, 'r')");
    expect(formatLineKey('{"_ng_task_index":1}')).toBeNull();
    const parsed = lineKey(line)!;
    expect(formatKey(parsed)).not.toContain('12345678901234567891');
    expect(formatKeyExactly(parsed, lineKeyId(line)!)).toBe('(12345678901234567891, -98765432109876543210)');
    expect(formatKeyExactly(k(true, 2.5), keyId(k(true, 2.5)))).toBe('(True, 2.5)');
  });

  it('sorts by task then rollout, numerically (§4.11)', () => {
    const keys = [k(2, 0), k(0, 1), k(10, 0), k(0, 0), k(1, 3)];
    expect([...keys].sort(compareKeys)).toEqual([k(0, 0), k(0, 1), k(1, 3), k(2, 0), k(10, 0)]);
    expect(compareKeys(k(1, 0), k(1.0, 0))).toBe(0);
    expect(compareKeys(k(true, 0), k(1, 0))).toBe(0);
  });

  it('mixed types do not crash (NeMo Gym would): null, then numbers, then strings', () => {
    const keys = [k('b', 0), k(5, 0), k(null, 0), k('a', 0), k(-1, 0)];
    expect([...keys].sort(compareKeys)).toEqual([k(null, 0), k(-1, 0), k(5, 0), k('a', 0), k('b', 0)]);
  });

  it('orders strings by code point like Python', () => {
    // U+FF5E (BMP) sorts before U+1F600 by code point, though its UTF-16 unit is larger.
    expect(compareKeys(k('\uff5e', 0), k('😀', 0))).toBeLessThan(0);
  });
});
