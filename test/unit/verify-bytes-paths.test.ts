/**
 * The batch's byte paths give exactly what the text paths give: the `/verify` body of a planned row
 * (`verifyRequestBytes` against `verifyRequest`) and the routed row of a 2xx reply
 * (`routeReplyBytes` against `settleReply` + `routeReply`), byte for byte and count for count; and
 * where they cannot speak for a row they say so (null) instead of guessing.
 */
import { describe, expect, it } from 'vitest';
import { emptyCounts, type Checkpoint } from '../../activities/verify-batch/checkpoint.js';
import { verifyRequestBytes } from '../../activities/verify-batch/payload-bytes.js';
import { routeReply, type Routed, type RowFacts } from '../../activities/verify-batch/route-reply.js';
import { routeReplyBytes } from '../../activities/verify-batch/route-reply-bytes.js';
import type { Stamps } from '../../src/contract/outcome.js';
import { verifyRequest } from '../../src/contract/payload.js';
import { settleReply } from '../../src/verifier/verify-reply.js';

/** `text` as bytes that start `shift` bytes past an aligned address, as a row cut out of a read does. */
function bytesAt(text: string, shift: number): Buffer {
  const b = Buffer.from(text, 'utf8');
  const room = Buffer.alloc(b.length + 8);
  b.copy(room, shift);
  return room.subarray(shift, shift + b.length);
}

const INPUTS = [
  '{"responses_create_params":{"input":[{"role":"user","content":"2+2?"}]},"_ng_task_index":3,"_ng_rollout_index":0,"agent_ref":{"name":"a"}}',
  '{ "_ng_task_index" : 12345678901234567890 , "_ng_rollout_index" : 1 }',
  '{"_ng_task_index":1,"_ng_rollout_index":2,"agent_ref":{"name":"é€😀"},"_ng_environment_server":"env","task_source":"s","skills_ref":[1,2.50]}',
  // A key twice: the last one is the value, and the one the body's member replaces.
  '{"_ng_task_index":1,"_ng_rollout_index":2,"response":{"old":true},"x":"a\\"b\\\\","response":null}',
  '{"_ng_task_index":0,"_ng_rollout_index":0,"deliverables_dir":"/old","reference_ids":[9],"q":"\\u00e9\\n"}',
  '{"q":1e5,"_ng_rollout_index":7,"_ng_task_index":"t"}\t',
];
const ROLLOUTS = [
  '{"response":{"id":"r","output":[{"type":"message","content":"4"}]},"reward":1.0,"_ng_task_index":3}',
  '{"reward":0,"response":"x","response":{"last":"wins"}}',
  '{"response":{"output":[]},"deliverables_dir":"/new","reference_ids":null}',
  '{"reference_ids":["a","é"],"response":[1,{"a":[]}],"_ng_rollout_index":0}',
  '  {"response":-0.5e-3}  ',
];

describe('verifyRequestBytes', () => {
  it('builds the body verifyRequest builds, byte for byte, with the same stamps, wherever the rows start', () => {
    let n = 0;
    for (const input of INPUTS)
      for (const rollout of ROLLOUTS)
        for (const shift of [0, 1, 2, 3]) {
          const want = verifyRequest(input, rollout);
          const got = verifyRequestBytes(bytesAt(input, shift), bytesAt(rollout, (shift + 1) % 4));
          expect(got, `${input} + ${rollout}`).not.toBeNull();
          expect(got!.payload.toString('utf8'), `${input} + ${rollout}`).toBe(want.payload);
          expect(got!.payload.equals(Buffer.from(want.payload, 'utf8'))).toBe(true);
          expect(got!.stamps).toEqual(want.stamps);
          n++;
        }
    expect(n).toBe(INPUTS.length * ROLLOUTS.length * 4);
  });

  it('leaves to verifyRequest a task row, an escaped key, invalid UTF-8, a row without its key or response', () => {
    const rollout = Buffer.from(ROLLOUTS[0]);
    const none = (input: string | Buffer, r: Buffer = rollout) => expect(verifyRequestBytes(Buffer.from(input), r)).toBeNull();
    none('{"task_id":{"t":1},"task_input":{"task_data":{"q":1}},"_ng_task_index":1,"_ng_rollout_index":0}');
    none('{"_ng_task_index":1,"_ng_rollout_\\u0069ndex":0}');
    none('{"_ng_task_index":1}');
    none(Buffer.concat([Buffer.from('{"_ng_task_index":1,"_ng_rollout_index":0,"q":"'), Buffer.from([0xc3]), Buffer.from('"}')]));
    none(INPUTS[0], Buffer.from('{"reward":1}'));
    none(INPUTS[0], Buffer.from('{"response":1,"response":}'));
  });
});

const stamps: Stamps = { task: '12345678901234567890', rollout: '1', agentRef: '{"name":"a"}' };
const stampsAll: Stamps = {
  task: '3',
  rollout: '0',
  agentRef: '{"name":"é"}',
  environmentServer: '"env"',
  taskSource: 'null',
  skillsRef: '[1]',
};
const row: RowFacts = { agent: 'a', planIndex: 7, latencyMs: 12, throttled: 0 };

const REPLIES = [
  '{"reward":1.0,"x":2}',
  '{"reward":12345678901234567890,"note":"é€😀 \\"q\\" \\\\","deep":{"a":[{"b":[1,2,{"c":null}]}]}}',
  '{}',
  '{"reward":"high"}',
  '{"x":[],"reward":-0.25e1}',
  '{"reward":0.0,"_ng_failure_class":"judge_failed","_ng_failure_message":"429"}',
  '{"reward":0.0,"_ng_failure_class":"","x":1}',
  '{"_ng_failure_class":null,"reward":1}',
  '{"_ng_failure_class":{"k":1},"reward":0}',
  '{"_ng_failure_class":7}',
  '{"reward":0.0,"_ng_failure_class":"timeout_exceeded","_ng_failure_terminal":true}',
  '{"reward":1,"_ng_no_persist":true,"_ng_failure_class":"judge_failed"}',
  ...['false', '0', '0.0', '-0', '0e3', '""', '[]', '{}', 'null', '[ ]', '"x"', '1', '[0]', '{"a":0}'].map(
    (v) => `{"reward":1,"_ng_no_persist":${v}}`,
  ),
  // The server echoed the stamps' keys (one of them twice): they are replaced in place, the last one.
  '{"_ng_task_index":0,"reward":1,"_ng_rollout_index":"old","agent_ref":{"name":"z"},"_ng_rollout_index":9,"y":1}',
  '{"skills_ref":null,"task_source":"x","_ng_environment_server":1,"reward":0.5}',
  '{"reward":1,"reward":0,"_ng_failure_class":"a","_ng_failure_class":null}',
  '{ "reward" : 1 , "a" : [ 1 , 2 ] }',
];

/** A routed row made comparable: its bytes, where it goes, its audit, and what it does to a checkpoint. */
function effect(r: Routed) {
  const cp: Checkpoint = { done: [], judgeFailedRows: [], mainBytes: 0, sidecarBytes: 0, counts: emptyCounts(), strikes: {} };
  r.count(cp.counts, cp);
  const line = r.line === null ? null : typeof r.line === 'string' ? r.line : Buffer.concat(r.line).toString('utf8');
  return { target: r.target, line, audit: r.audit, cp };
}

describe('routeReplyBytes', () => {
  it('routes, stamps and counts every reply as the text path does, byte for byte', () => {
    for (const s of [stamps, stampsAll])
      for (const reply of REPLIES)
        for (const facts of [row, { ...row, throttled: 2 }]) {
          const body = bytesAt(reply, 3);
          const want = routeReply(settleReply({ kind: 'ok', status: 200, body }), s, facts);
          const got = routeReplyBytes(body, s, facts, {});
          expect(got, reply).not.toBeNull();
          if (got!.line !== null) expect(Array.isArray(got!.line)).toBe(true);
          expect(effect(got!), reply).toEqual(effect(want));
        }
  });

  it('counts a reward only when it is a number, and lists judge failures for the next round', () => {
    const routed = (reply: string) => effect(routeReplyBytes(Buffer.from(reply), stamps, row, {})!);
    expect(routed('{"reward":0.75}').cp.counts.perAgent.a).toMatchObject({ done: 1, rewardSum: 0.75 });
    expect(routed('{"reward":"0.75"}').cp.counts.perAgent.a).toMatchObject({ done: 1, rewardSum: 0 });
    expect(routed('{"reward":0,"_ng_failure_class":"judge_failed"}').cp.judgeFailedRows).toEqual([7]);
    expect(routed('{"reward":0,"_ng_failure_class":"permanent","_ng_failure_terminal":true}').cp.judgeFailedRows).toEqual([]);
  });

  it('leaves to the text path what it cannot speak for', () => {
    const none = (body: string | Buffer, s: Stamps = stamps, facts: RowFacts = row, rules = {}) =>
      expect(routeReplyBytes(Buffer.from(body), s, facts, rules), String(body)).toBeNull();
    for (const body of [
      ' {"reward":1}',
      '{"reward":1}\n',
      '{\n  "reward": 1\n}',
      '{"reward":1,\r"a":2}',
      '\ufeff{"reward":1}',
      '{"rew\\u0061rd":1}',
      '{"reward":1',
      '[1]',
      '',
      '{"reward":1} {}',
    ])
      none(body);
    none(Buffer.concat([Buffer.from('{"reward":1,"n":"'), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]));
    none('{"reward":1}', stamps, row, { retryInvalidJudgeResponses: true });
    none('{"reward":1}', stamps, { ...row, atif: true });
    none('{"reward":1}', { ...stamps, atifProvenance: '{}' });
    none('{"reward":1}', stamps, { ...row, rejudgment: { opId: 'o', judged: '{}', saved: '{}' } });
  });
});
