import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { topLevelSpans } from '../../src/contract/json-spans.js';
import { rawTruthy } from '../../src/contract/python-truthiness.js';
import { isTerminalFailure } from '../../src/contract/retry-rules.js';
import { lineKeyId } from '../../src/contract/row-key.js';
import { isBlank, jsonlLines } from '../../src/io/jsonl-lines.js';
import { outputKeyIds, sidecarAttemptLines, type SidecarAttempt } from '../../src/planning/output-cache.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-output-cache-');

/**
 * The full path alone, line by line on decoded text (what the readers did before the byte scanner):
 * the oracle the fast path must match, keys, attempts and error messages alike.
 */
async function fullPath(path: string, repairTruncated: boolean, retryTerminalTimeouts: boolean): Promise<SidecarAttempt[] | string> {
  const out: SidecarAttempt[] = [];
  try {
    for await (const line of jsonlLines(path)) {
      if (isBlank(line.text)) continue;
      if (!line.terminated) {
        try {
          JSON.parse(line.text);
        } catch {
          if (repairTruncated) continue;
          throw new Error(`${path}:${line.lineNo}: the last line is cut off`);
        }
      }
      let id: string | null;
      try {
        id = lineKeyId(line.text);
      } catch (err) {
        throw new Error(`${path}:${line.lineNo}: malformed JSON (${(err as Error).message}); fix or remove this line`);
      }
      if (id === null) continue;
      const spans = topLevelSpans(line.text);
      const raw = (k: string) => {
        const s = spans.get(k);
        return s ? line.text.slice(s.start, s.end) : 'null';
      };
      const omitted = rawTruthy(raw('_ng_omitted'));
      const cls = retryTerminalTimeouts ? (JSON.parse(raw('_ng_failure_class')) as unknown) : undefined;
      out.push({
        id,
        terminal: omitted || isTerminalFailure(cls, rawTruthy(raw('_ng_failure_terminal')), { retryTerminalTimeouts }),
        omitted,
        failureClass: raw('_ng_failure_class'),
      });
    }
  } catch (err) {
    return (err as Error).message;
  }
  return out;
}

async function fastPath(path: string, repairTruncated: boolean, retryTerminalTimeouts: boolean): Promise<SidecarAttempt[] | string> {
  const out: SidecarAttempt[] = [];
  const ids: string[] = [];
  try {
    for await (const id of outputKeyIds(path, { repairTruncated })) ids.push(id);
    for await (const a of sidecarAttemptLines(path, { repairTruncated, retryTerminalTimeouts })) out.push(a);
  } catch (err) {
    return (err as Error).message.replace(/ \(the writer crashed.*$/, '');
  }
  expect(ids).toEqual(out.map((a) => a.id));
  return out;
}

const row = (t: unknown, r: unknown, more = '') =>
  `{"_ng_task_index":${String(t)},"_ng_rollout_index":${String(r)},"response":{"x":"a\\"b"}${more}}`;

/** Lines each reader must read as the full path does. */
const TRICKY: (string | Buffer)[] = [
  row(0, 1),
  row(0, 1, ',"_ng_failure_terminal":true'),
  row(2, 0, ',"_ng_omitted":1,"_ng_failure_class":"timeout"'),
  row(3, 0, ',"_ng_failure_class":"timeout","_ng_failure_terminal":0'),
  row(3, 1, ',"_ng_failure_class":"verify_rejected","_ng_failure_terminal":{}'),
  '{"_ng_task_\\u0069ndex":4,"_ng_rollout_index":0}', // an escaped key: the decoded name counts
  '{"_ng_task_index":5,"_ng_rollout_index":0,"_ng_task_index":6}', // a repeated key: the last wins
  row('12345678901234567891', 0), // above 2^53
  row('1234567890123456', 0), // 16 digits
  row('1.0', '1e0'),
  row('-1', '0'),
  row('true', 'false'),
  row('"7"', '"x\\u00e9"'),
  row('null', 1), // keyless
  '{"a":1}', // keyless
  '{}',
  '',
  '   ',
  '\t',
  ' ' + row(8, 0) + ' ',
  row(9, 0) + '\r',
  Buffer.concat([Buffer.from('{"_ng_task_index":10,"_ng_rollout_index":0,"note":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]), // bad UTF-8
  '{"_ng_task_index":11,"_ng_rollout_index":0,"note":"a\tb"}', // a raw tab in a string: JSON.parse refuses, the key scan does not
  '{"_ng_task_index":12,"_ng_rollout_index":0,"x":[1,,2]}', // nested nonsense the key scan does not check
];

async function written(lines: (string | Buffer)[]): Promise<string> {
  const path = tmp.unique('out', '.jsonl');
  writeFileSync(path, Buffer.concat(lines.map((l) => Buffer.concat([Buffer.from(l), Buffer.from('\n')]))));
  return path;
}

async function same(lines: (string | Buffer)[], last: string | Buffer | null): Promise<void> {
  const path = tmp.unique('out', '.jsonl');
  const parts: Buffer[] = lines.map((l) => Buffer.concat([Buffer.from(l), Buffer.from('\n')]));
  if (last !== null) parts.push(Buffer.from(last));
  writeFileSync(path, Buffer.concat(parts));
  for (const repair of [true, false])
    for (const retry of [true, false]) {
      const want = await fullPath(path, repair, retry);
      expect(await fastPath(path, repair, retry), `${path} repair=${repair} retry=${retry}`).toEqual(want);
    }
}

describe('output and sidecar readers (byte scan with the full path as fallback)', () => {
  it('read every tricky line as the full path does', async () => {
    await same(TRICKY, null);
    expect(await fastPath(await written(TRICKY), false, false)).toHaveLength(18);
  });

  it('give the keys one expects (not only what the oracle says)', async () => {
    const path = await written(TRICKY);
    const ids: string[] = [];
    for await (const id of outputKeyIds(path, { repairTruncated: false })) ids.push(id);
    expect(ids.slice(0, 13)).toEqual([
      '["0","1"]',
      '["0","1"]',
      '["2","0"]',
      '["3","0"]',
      '["3","1"]',
      '["4","0"]',
      '["6","0"]',
      '["12345678901234567891","0"]',
      '["1234567890123456","0"]',
      '["1","1"]',
      '["-1","0"]',
      '["1","0"]',
      '["s7","sxé"]',
    ]);
    expect(ids.slice(13)).toEqual(['["8","0"]', '["9","0"]', '["10","0"]', '["11","0"]', '["12","0"]']);
  });

  it('treat a cut-off last line as the full path does', async () => {
    await same([row(0, 0)], '{"_ng_task_index":1,"_ng_rollout_index":');
    await same([row(0, 0)], row(1, 0)); // complete, only its newline missing
    await same([row(0, 0)], Buffer.concat([Buffer.from('{"_ng_task_index":1,"_ng_rollout_index":0,"n":"'), Buffer.from([0xc3])]));
  });

  it('stop at a malformed line with the same message', async () => {
    await same([row(0, 0), '{"_ng_task_index":1,', row(2, 0)], null);
    await same([row(0, 0), '[1,2]'], null);
    await same([row(0, 0), '\u00a0' + row(13, 0)], null); // not JSON whitespace
    await same([row(0, 0), '{"_ng_task_index":1,"_ng_rollout_index":2}x'], null);
  });
});
