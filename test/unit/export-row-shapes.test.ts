/**
 * The exported row, shape by shape, as NeMo Gym 0.7.0's `_rollout_for_export` makes it and orjson
 * writes it (read from its rollout-collection code), and the orjson text form checked against the
 * real orjson (the `.wandb` venv of scripts/install-wandb.sh).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { orjsonFloat, readMembers, writeObject } from '../../src/upload/orjson-text.js';
import { sanitizeForExport } from '../../src/upload/sanitize-row.js';
import { wandbPython, wandbSkipReason } from '../helpers/wandb-offline.js';

const CALL = '{"id":"a","request":{"m":1},"response":[2],"request_raw":"r","response_raw":"s","ms":3}';

describe('ng_model_call_capture, each shape _rollout_for_export handles', () => {
  it('an object with a calls list: each call without its raw payloads, calls that are not objects dropped; the capture moves to the end', () => {
    const row = `{"_ng_task_index":1,"ng_model_call_capture":{"v":2,"calls":[${CALL},7,null,"x",[1],{"id":"b"}],"metrics":{"n":1}},"z":true}`;
    expect(sanitizeForExport(row)).toBe(
      '{"_ng_task_index":1,"z":true,"ng_model_call_capture":{"v":2,"calls":[{"id":"a","ms":3},{"id":"b"}],"metrics":{"n":1}}}',
    );
  });

  it('a calls that is not a list (null, string, object, number) is removed; an absent calls stays absent', () => {
    for (const calls of ['null', '"x"', '{"a":1}', '3'])
      expect(sanitizeForExport(`{"ng_model_call_capture":{"calls":${calls},"n":1},"a":1}`)).toBe('{"a":1,"ng_model_call_capture":{"n":1}}');
    expect(sanitizeForExport('{"ng_model_call_capture":{"rollout_id":"0-0"},"a":1}')).toBe(
      '{"a":1,"ng_model_call_capture":{"rollout_id":"0-0"}}',
    );
    expect(sanitizeForExport('{"ng_model_call_capture":{"calls":[]}}')).toBe('{"ng_model_call_capture":{"calls":[]}}');
  });

  it('a capture that is not an object (null, list, string, number, bool) is dropped', () => {
    for (const capture of ['null', `[${CALL}]`, '"c"', '0', 'false'])
      expect(sanitizeForExport(`{"a":"b c","ng_model_call_capture":${capture},"z":1}`)).toBe('{"a":"b c","z":1}');
  });

  it('ng_trajectory is passed over whatever its strings hold (brackets, quotes, escapes)', () => {
    expect(sanitizeForExport('{"ng_trajectory":{"a":"}]\\\\\\"{[","b":[{"c":"\\ud83d\\ude00"}],"d":""},"z":[1]}')).toBe('{"z":[1]}');
  });

  it('ng_trajectory is dropped whatever it holds; the other capture fields (ng_agent_observations, ng_perf) are kept in place', () => {
    for (const t of ['{"model_calls":[{"request":{}}]}', 'null', '[1]', '"t"'])
      expect(sanitizeForExport(`{"ng_trajectory":${t},"ng_agent_observations":{"gaps":[]},"ng_perf":{"ms":1.0}}`)).toBe(
        '{"ng_agent_observations":{"gaps":[]},"ng_perf":{"ms":1.0}}',
      );
  });

  it('a repeated key keeps its first place and its last value, at any depth (a Python dict)', () => {
    expect(sanitizeForExport('{"a":1,"b":2,"a":3,"ng_model_call_capture":{"calls":[]},"ng_model_call_capture":{"k":1}}')).toBe(
      '{"a":3,"b":2,"ng_model_call_capture":{"k":1}}',
    );
    expect(sanitizeForExport('{"ng_model_call_capture":{"calls":[{"id":1,"request":2,"id":4,"m":{"x":1,"x":2}}]}}')).toBe(
      '{"ng_model_call_capture":{"calls":[{"id":4,"m":{"x":2}}]}}',
    );
  });

  it('rows orjson cannot read are refused, as NeMo Gym cannot load them', () => {
    expect(() => sanitizeForExport('{"a":"\\ud800"}')).toThrow(/lone surrogate/);
    expect(() => sanitizeForExport('{"a":1e400}')).toThrow(/infinity/);
    expect(() => sanitizeForExport('{"ng_trajectory":{"t":["\\udc00"]},"a":1}')).toThrow(/lone surrogate/);
    expect(() => sanitizeForExport('{"ng_trajectory":[1e400],"a":1}')).toThrow(/infinity/);
  });
});

describe('orjson text form', () => {
  it('numbers and strings as orjson writes them', () => {
    const row =
      '{ "i": -0, "big": 12345678901234567890, "huge": 123456789012345678901234567890, "f": 1.0, "e5": 1e5, "small": 1.5e-7, ' +
      '"e16": 1e16, "e15": 1E15, "z": -0.0, "t": 0.00001, "s": "\\u00e9\\/\\u001f\\u007f\\t é 😀", "n": null, "1": [true, false, {}] }';
    expect(writeObject(readMembers(row))).toBe(
      '{"i":0,"big":12345678901234567890,"huge":1.2345678901234568e29,"f":1.0,"e5":100000.0,"small":1.5e-7,' +
        '"e16":1e16,"e15":1000000000000000.0,"z":-0.0,"t":0.00001,"s":"é/\\u001f\u007f\\t é 😀","n":null,"1":[true,false,{}]}',
    );
    expect([5e-324, 1.7976931348623157e308, 0.1, 2500, 123456.789e3, -1e-5].map(orjsonFloat)).toEqual([
      '5e-324',
      '1.7976931348623157e308',
      '0.1',
      '2500.0',
      '123456789.0',
      '-0.00001',
    ]);
  });

  const skip = wandbSkipReason();
  it('equals orjson.dumps(orjson.loads(row)) on rows of every number and string form', () => {
    // orjson comes with W&B's client, which `npm run setup:test` installs: missing, this fails with what to run.
    if (skip !== null) throw new Error(skip);
    const rows: string[] = [];
    const nums = ['0', '-0', '7', '-9223372036854775808', '-9223372036854775809', '18446744073709551615', '18446744073709551616'];
    for (let e = -330; e <= 290; e += 7) nums.push(`1.2345678901234567e${e}`, `3e${e}`, `-${2 ** Math.abs(e % 20)}.5e${e}`);
    for (let i = 0; i < nums.length; i += 8)
      rows.push(`{"k${i}": [${nums.slice(i, i + 8).join(', ')}], "s": "\\u0001\\u00ff ✓ \\ud83d\\ude00 \\\\ \\" /"}`);
    const script = 'import sys, orjson\nfor line in sys.stdin.buffer: sys.stdout.buffer.write(orjson.dumps(orjson.loads(line)) + b"\\n")';
    const out = execFileSync(wandbPython(), ['-c', script], { input: rows.join('\n') + '\n', encoding: 'utf8' });
    expect(rows.map((r) => writeObject(readMembers(r)))).toEqual(out.trimEnd().split('\n'));
  });
});
