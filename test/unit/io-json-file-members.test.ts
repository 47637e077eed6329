import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { writeMetricsFile } from '../../src/aggregation/aggregate-metrics-file.js';
import { AggregateReplyProblem, readAggregateReply } from '../../src/aggregation/aggregate-reply.js';
import { jsonFileMembers } from '../../src/io/json-file-members.js';
import { mulberry32 } from '../../src/reference-server/prng.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-json-members-');

/** A random JSON value: nested objects and arrays (some empty), strings with quotes, escapes, brackets and non-ASCII. */
function value(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 3 ? 4 : 7));
  if (k === 0) return Math.round(r() * 1e6) / 1e3;
  if (k === 1) return ['plain', 'a "quoted" {x} [y], z: 1', 'back\\slash\n', 'é ✓ 𝄞', ''][Math.floor(r() * 5)];
  if (k === 2) return [true, false, null][Math.floor(r() * 3)];
  if (k === 3) return -Math.floor(r() * 100);
  if (k === 4) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, (_, i) => [`k${i} "{["`, value(r, depth + 1)]));
}

/** `text` with whitespace between tokens the way another server might write it. */
const spaced = (v: unknown, indent: number | string) => JSON.stringify(v, null, indent);

describe('metrics file from replies on disk', () => {
  it.each([0, 1, 2, 3, 4, 5])("equals JSON.stringify(entries, null, 2), whatever the replies' whitespace (seed %i)", async (seed) => {
    const r = mulberry32(seed);
    const dir = tmp.freshDir();
    const entries: Array<{ agent: string; reply: Awaited<ReturnType<typeof readAggregateReply>> }> = [];
    const expected: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const reply = {
        group_level_metrics: Array.from({ length: Math.floor(r() * 5) }, () => value(r, 1)),
        agent_metrics: { 'mean/reward': r(), nested: value(r, 1) },
        key_metrics: i === 1 ? null : { 'mean/reward': r() },
        ...(r() < 0.5 ? { extra: value(r, 1) } : {}),
        ...(i === 2 ? {} : { repeat_level_metrics: i === 1 ? null : Array.from({ length: Math.floor(r() * 3) }, () => value(r, 1)) }),
      };
      const path = `${dir}/reply${i}.json`;
      writeFileSync(path, i === 0 ? JSON.stringify(reply) : spaced(reply, i === 1 ? '\t' : 3) + '\n');
      entries.push({ agent: `agent "${i}"`, reply: await readAggregateReply(path) });
      expected.push({
        agent_ref: { name: `agent "${i}"` },
        agent_metrics: reply.agent_metrics,
        key_metrics: reply.key_metrics ?? {},
        group_level_metrics: reply.group_level_metrics,
        repeat_level_metrics: reply.repeat_level_metrics ?? [],
      });
    }
    const out = `${dir}/metrics.json`;
    await writeMetricsFile(out, entries);
    expect(readFileSync(out, 'utf8')).toBe(JSON.stringify(expected, null, 2));
    expect(entries[1].reply.keyMetrics).toEqual({});
  });

  it("each entry is NeMo Gym 0.7.0's: agent_ref, agent_metrics, key_metrics, group_level_metrics, repeat_level_metrics; nothing else of the reply", async () => {
    const dir = tmp.freshDir();
    // The fields in another order, with what 0.7.0 does not keep (perf_summary, unknown fields).
    const withRepeats = `{"repeat_level_metrics":[{"_ng_rollout_index":0,"sample_count":2,"mean/reward":0.5}],"perf_summary":{"n":1},"x":1,
      "key_metrics":{"mean/reward":0.5},"group_level_metrics":[],"agent_metrics":{"mean/reward":0.5}}`;
    // A server that omits repeat_level_metrics (NeMo Gym before 0.7.0) and key_metrics.
    const without = '{"group_level_metrics":[{"_ng_task_index":0}],"agent_metrics":{}}';
    writeFileSync(`${dir}/a.json`, withRepeats);
    writeFileSync(`${dir}/b.json`, without);
    const out = `${dir}/metrics.json`;
    await writeMetricsFile(out, [
      { agent: 'a', reply: await readAggregateReply(`${dir}/a.json`) },
      { agent: 'b', reply: await readAggregateReply(`${dir}/b.json`) },
    ]);
    // orjson.dumps(entries, option=OPT_INDENT_2) of the dicts 0.7.0 builds.
    expect(readFileSync(out, 'utf8')).toBe(
      [
        '[',
        '  {',
        '    "agent_ref": {',
        '      "name": "a"',
        '    },',
        '    "agent_metrics": {',
        '      "mean/reward": 0.5',
        '    },',
        '    "key_metrics": {',
        '      "mean/reward": 0.5',
        '    },',
        '    "group_level_metrics": [],',
        '    "repeat_level_metrics": [',
        '      {',
        '        "_ng_rollout_index": 0,',
        '        "sample_count": 2,',
        '        "mean/reward": 0.5',
        '      }',
        '    ]',
        '  },',
        '  {',
        '    "agent_ref": {',
        '      "name": "b"',
        '    },',
        '    "agent_metrics": {},',
        '    "key_metrics": {},',
        '    "group_level_metrics": [',
        '      {',
        '        "_ng_task_index": 0',
        '      }',
        '    ],',
        '    "repeat_level_metrics": []',
        '  }',
        ']',
      ].join('\n'),
    );
  });

  it('repeat_level_metrics that is not an array is not the expected reply', async () => {
    const path = tmp.unique('reply-', '.json');
    writeFileSync(path, '{"group_level_metrics":[],"agent_metrics":{},"key_metrics":{},"repeat_level_metrics":{"a":1}}');
    await expect(readAggregateReply(path)).rejects.toThrow(/repeat_level_metrics: expected an array/);
  });

  it('keeps the bytes of numbers and strings as the server wrote them (1.0 stays 1.0)', async () => {
    const path = tmp.unique('reply-', '.json');
    writeFileSync(path, '{"group_level_metrics":[{"pass@1":1.0,"s":"\\u00e9"}],"agent_metrics":{},"key_metrics":{"mean/reward":1.0}}');
    const out = tmp.unique('metrics-', '.json');
    await writeMetricsFile(out, [{ agent: 'a', reply: await readAggregateReply(path) }]);
    expect(readFileSync(out, 'utf8')).toContain('"pass@1": 1.0,\n        "s": "\\u00e9"');
  });

  it("writes NaN and ±Infinity (Python's json tokens) as null, as NeMo Gym does, anywhere in the reply; strings and long numbers keep their bytes", async () => {
    const path = tmp.unique('reply-', '.json');
    const reply =
      '{"group_level_metrics":[NaN,{"a":Infinity,"b":-Infinity,"s":"NaN Infinity","n":-12345678901.5e-3}],' +
      '"agent_metrics":{"mean/reward": NaN ,"x":[ -Infinity ]},"key_metrics":{"mean/reward":NaN,"max":Infinity}}';
    writeFileSync(path, reply);
    const read = await readAggregateReply(path);
    expect(read.keyMetrics).toEqual({ 'mean/reward': null, max: null });
    const out = tmp.unique('metrics-', '.json');
    await writeMetricsFile(out, [{ agent: 'a', reply: read }]);
    const text = readFileSync(out, 'utf8');
    expect(text).not.toMatch(/NaN,|Infinity,|NaN\n|Infinity\n/);
    expect(JSON.parse(text)).toEqual([
      {
        agent_ref: { name: 'a' },
        agent_metrics: { 'mean/reward': null, x: [null] },
        key_metrics: { 'mean/reward': null, max: null },
        group_level_metrics: [null, { a: null, b: null, s: 'NaN Infinity', n: -12345678901.5e-3 }],
        repeat_level_metrics: [],
      },
    ]);
    expect(text).toContain('"n": -12345678901.5e-3');
  });

  it('finds top-level members by byte range; a repeated key keeps its last value', async () => {
    const path = tmp.unique('members-', '.json');
    const text = ' { "a" : 1 , "b":"x}", "c": {"d": [1, {"e": "]"}]}, "a": [ ] , "é": null}\n';
    writeFileSync(path, text);
    const m = await jsonFileMembers(path);
    const bytes = Buffer.from(text);
    const at = (k: string) => bytes.subarray(m.get(k)!.start, m.get(k)!.end).toString();
    expect([...m.keys()]).toEqual(['a', 'b', 'c', 'é']);
    expect([at('a'), at('b'), at('c'), at('é')]).toEqual(['[ ]', '"x}"', '{"d": [1, {"e": "]"}]}', 'null']);
  });

  it.each([
    ['cut off', '{"group_level_metrics": [1, 2', /unexpected end of data/],
    ['a string cut off', '{"a": "abc', /unterminated string/],
    ['brackets mismatched', '{"a": [1}', /mismatched bracket/],
    ['data after the object', '{"a": 1} x', /unexpected data after the JSON value/],
    ['a missing colon', '{"a" 1}', /expected ':'/],
    ['an HTML error page', '<html>proxy error</html>', /not a JSON object at byte 0/],
    ['an empty body', '', /unexpected end of data|end/],
  ])('a reply that is not JSON: %s', async (_label, text, message) => {
    const path = tmp.unique('bad-', '.json');
    writeFileSync(path, text);
    const err = await readAggregateReply(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AggregateReplyProblem);
    expect((err as AggregateReplyProblem).kind).toBe('syntax');
    expect((err as Error).message).toMatch(message);
  });

  it.each([
    ['not an object', '[1]', '(root): expected an object'],
    ['a string', ' "ok"', '(root): expected an object'],
    ['group_level_metrics not an array', '{"group_level_metrics": 3}', 'group_level_metrics: expected an array, got 3'],
    ['key_metrics not an object', '{"key_metrics": [1]}', 'key_metrics: expected an object, got [1]'],
  ])('a reply of the wrong shape: %s', async (_label, text, message) => {
    const path = tmp.unique('shape-', '.json');
    writeFileSync(path, text);
    const err = await readAggregateReply(path).catch((e: unknown) => e);
    expect((err as AggregateReplyProblem).kind).toBe('shape');
    expect((err as Error).message).toBe(message);
  });
});
