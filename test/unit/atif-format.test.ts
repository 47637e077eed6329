/** The ATIF building blocks: strict JSON, manifest rows, timestamps, the SHA-256 pin, the declared Gym key. */
import { describe, expect, it } from 'vitest';
import { emptyManifest, parseManifestLine, trajectoryFile, unpinnedWarning } from '../../src/atif/manifest.js';
import { pyJsonDumps } from '../../src/atif/py-json.js';
import { stampAtifFailure, stampResult } from '../../src/contract/outcome.js';
import { parseStrictJson, parseStrictJsonBytes, PyFloat } from '../../src/atif/strict-json.js';
import { epochSeconds, isoTimestampProblem } from '../../src/atif/timestamps.js';
import { checkDeclaredSource, checkPinnedSha256, readTrajectory, sha256Hex } from '../../src/atif/trajectory.js';

const SHA = 'a'.repeat(64);

describe('strict JSON (as NeMo Gym reads ATIF files)', () => {
  it('keeps integers exact, floats as floats, and refuses what Python refuses', () => {
    expect(parseStrictJson('{"a": 12345678901234567890, "b": 1.0, "c": 2}')).toEqual({ a: 12345678901234567890n, b: new PyFloat(1), c: 2 });
    expect(() => parseStrictJson('{"a": 1, "a": 2}')).toThrow("duplicate object key 'a'");
    expect(() => parseStrictJson('[NaN]')).toThrow("non-JSON numeric constant 'NaN'");
    expect(() => parseStrictJson('[-Infinity]')).toThrow("non-JSON numeric constant '-Infinity'");
    expect(() => parseStrictJson('[1e400]')).toThrow("JSON number '1e400' exceeds the finite float range");
    expect(() => parseStrictJson('[1e-400]')).toThrow("JSON number '1e-400' underflows the finite float range");
    expect(() => parseStrictJson('[0.1000000000000000000001]')).toThrow('cannot be represented without precision loss');
    expect(parseStrictJson('[0.10, 1E2, -0.0]')).toEqual([new PyFloat(0.1), new PyFloat(100), new PyFloat(-0)]);
  });

  it("says where the syntax breaks, in Python's words", () => {
    expect(() => parseStrictJson('{"a": }')).toThrow('Expecting value: line 1 column 7 (char 6)');
    expect(() => parseStrictJson('{"a": 1}\n{')).toThrow('Extra data: line 2 column 1 (char 9)');
    expect(() => parseStrictJson('{"a" 1}')).toThrow("Expecting ':' delimiter: line 1 column 6 (char 5)");
    expect(() => parseStrictJson('["a\tb"]')).toThrow('Invalid control character at: line 1 column 4 (char 3)');
    expect(() => parseStrictJsonBytes(Uint8Array.from([0x5b, 0xff, 0x5d]))).toThrow('not valid UTF-8');
  });

  it("dumps values as Python's json.dumps(ensure_ascii=False, compact) does", () => {
    const v = parseStrictJson('{"b": [1, 2.50, 1e-7, 1e16, null, true], "a": "café \\u2713", "é": {"z": 1, "y": 12345678901234567890}}');
    expect(pyJsonDumps(v, true)).toBe('{"a":"café ✓","b":[1,2.5,1e-07,1e+16,null,true],"é":{"y":12345678901234567890,"z":1}}');
  });
});

describe('manifest rows', () => {
  const path = '/data/m.jsonl';
  it('reads an entry, pinned or not', () => {
    expect(
      parseManifestLine(`{"trajectory_path":"t/0.json","_ng_task_index":0,"_ng_rollout_index":2,"expected_sha256":"${SHA}"}`, 1, path),
    ).toEqual({
      trajectoryPath: 't/0.json',
      task: 0,
      rollout: 2,
      expectedSha256: SHA,
    });
    expect(
      parseManifestLine('{"trajectory_path":"t.json","_ng_task_index":1,"_ng_rollout_index":0,"expected_sha256":null}', 1, path)
        .expectedSha256,
    ).toBe(null);
  });

  it.each([
    [
      '{"trajectory_path":"t.json","_ng_task_index":-1,"_ng_rollout_index":0}',
      '_ng_task_index: Input should be greater than or equal to 0',
    ],
    ['{"trajectory_path":"t.json","_ng_task_index":true,"_ng_rollout_index":0}', '_ng_task_index: Input should be a valid integer'],
    ['{"trajectory_path":"t.json","_ng_task_index":1.0,"_ng_rollout_index":0}', '_ng_task_index: Input should be a valid integer'],
    ['{"trajectory_path":"t.json","_ng_task_index":0}', '_ng_rollout_index: Field required'],
    ['{"_ng_task_index":0,"_ng_rollout_index":0}', 'trajectory_path: Field required'],
    ['{"trajectory_path":5,"_ng_task_index":0,"_ng_rollout_index":0}', 'trajectory_path: Input is not a valid path'],
    ['{"trajectory_path":"t.json","_ng_task_index":0,"_ng_rollout_index":0,"note":"x"}', 'note: Extra inputs are not permitted'],
    [
      '{"trajectory_path":"t.json","_ng_task_index":0,"_ng_rollout_index":0,"expected_sha256":"ABC"}',
      "expected_sha256: String should match pattern '^[0-9a-f]{64}$'",
    ],
    ['[1]', 'Input should be a valid dictionary'],
    ['{"trajectory_path":', 'Expecting value: line 1 column 20 (char 19)'],
  ])('%s is refused: %s', (line, detail) => {
    expect(() => parseManifestLine(line, 3, path)).toThrow(`invalid ATIF manifest row 3 in ${path}: ${detail}`);
  });

  it('resolves relative trajectory paths against the manifest directory', () => {
    expect(trajectoryFile('/data/run/m.jsonl', 'traj/0.json')).toBe('/data/run/traj/0.json');
    expect(trajectoryFile('/data/run/m.jsonl', '../other/1.json')).toBe('/data/other/1.json');
    expect(trajectoryFile('/data/run/m.jsonl', '/abs/2.json')).toBe('/abs/2.json');
  });

  it("has 0.7.0's texts for an empty manifest and unpinned entries", () => {
    expect(emptyManifest(path).message).toBe('ATIF manifest /data/m.jsonl contains no entries');
    expect(unpinnedWarning(path, 2, 5)).toBe(
      'WARNING: ATIF manifest /data/m.jsonl has 2 of 5 entries without expected_sha256; Gym will record each observed source hash but cannot compare those files with a manifest-pinned digest.',
    );
  });
});

describe('timestamps, the SHA-256 pin and the declared Gym key', () => {
  it('reads the ISO 8601 forms Python accepts and their epoch seconds', () => {
    expect(epochSeconds('2026-03-01T10:00:02.250000+00:00')).toBe(1772359202.25);
    expect(epochSeconds('2026-03-01T11:00:01.5+01:00')).toBe(1772359201.5);
    expect(epochSeconds('2026-03-01T10:00:00Z')).toBe(1772359200);
    expect(epochSeconds('2026-03-01T10:00:00')).toBe(null);
    for (const ok of ['2026-03-01', '20260301T100000', '2026-03-01 10:00', '2026-03-01T10:00:00.1234567-05:30'])
      expect(isoTimestampProblem(ok)).toBe(null);
    for (const bad of ['nope', '2026-02-30', '2026-03-01T25:00', ''])
      expect(isoTimestampProblem(bad)).toContain('invalid ISO 8601 timestamp');
  });

  it('compares a pinned SHA-256 with the bytes read', () => {
    const bytes = Buffer.from('{}');
    expect(() => checkPinnedSha256('/t.json', sha256Hex(bytes), sha256Hex(bytes))).not.toThrow();
    expect(() => checkPinnedSha256('/t.json', null, sha256Hex(bytes))).not.toThrow();
    expect(() => checkPinnedSha256('/t.json', SHA, sha256Hex(bytes))).toThrow(
      `ATIF source hash mismatch for /t.json: expected ${SHA}, got ${sha256Hex(bytes)}`,
    );
  });

  it('refuses a trajectory declaring another Gym key than its manifest entry', () => {
    const doc = (source: string) =>
      readTrajectory(
        Buffer.from(
          `{"schema_version":"ATIF-v1.7","agent":{"name":"a","version":"1"},"steps":[{"step_id":1,"source":"agent","message":"x"}],"extra":{"nemo_gym":{"source":${source}}}}`,
        ),
        't',
      ).trajectory;
    expect(() => checkDeclaredSource(doc('{"task_index":1,"rollout_index":0}'), { task: 1, rollout: 0 })).not.toThrow();
    expect(() => checkDeclaredSource(doc('{"task_index":2}'), { task: 1, rollout: 0 })).toThrow(
      'Gym ATIF source task_index 2 conflicts with manifest value 1',
    );
    expect(() => checkDeclaredSource(doc('{"rollout_index":"0"}'), { task: 1, rollout: 0 })).toThrow(
      "Gym ATIF source rollout_index is invalid: '0'",
    );
  });
});

describe('ATIF result rows (stamps, kill-shaped class)', () => {
  const stamps = { task: '1', rollout: '0', agentRef: '{"name":"a"}', atifProvenance: '{"trajectory_id":"t"}' };

  it('stamps the provenance last, after the other stamps', () => {
    expect(stampResult('{"reward":1.0}', stamps)).toBe(
      '{"reward":1.0,"_ng_task_index":1,"_ng_rollout_index":0,"agent_ref":{"name":"a"},"_ng_atif_provenance":{"trajectory_id":"t"}}',
    );
  });

  it('classes a sidecar row kill_shaped when its class is absent or falsy, in place or at the end', () => {
    expect(stampAtifFailure('{"reward":0.0,"_ng_no_persist":true}', stamps)).toBe(
      '{"reward":0.0,"_ng_no_persist":true,"_ng_task_index":1,"_ng_rollout_index":0,"agent_ref":{"name":"a"},"_ng_atif_provenance":{"trajectory_id":"t"},"_ng_failure_class":"kill_shaped"}',
    );
    expect(stampAtifFailure('{"_ng_failure_class":"","reward":0.0}', stamps)).toMatch(
      /^\{"_ng_failure_class":"kill_shaped","reward":0\.0,/,
    );
    expect(stampAtifFailure('{"_ng_failure_class":"judge_failed"}', stamps)).toMatch(/^\{"_ng_failure_class":"judge_failed",/);
  });
});
