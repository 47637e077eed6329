/** The named parts of the verifyBatch activity: routing a result, the reject guard, the recorder. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { BatchRecorder } from '../../activities/verify-batch/batch-recorder.js';
import { emptyCounts, type Checkpoint } from '../../activities/verify-batch/checkpoint.js';
import { RejectGuard } from '../../activities/verify-batch/reject-guard.js';
import { routeReply, routeSetAside } from '../../activities/verify-batch/route-reply.js';
import type { Stamps } from '../../src/contract/outcome.js';
import { VerifierUnavailableError } from '../../src/verifier/errors.js';
import { useTempRoot } from '../helpers/temp-dirs.js';

const tmp = useTempRoot('reverify-batch-parts-');
const stamps: Stamps = { task: '12345678901234567890', rollout: '1', agentRef: '{"name":"a"}' };
const row = { agent: 'a', planIndex: 7, latencyMs: 12, throttled: 0 };
const ok = (body: string) => ({ kind: 'ok' as const, status: 200, body, result: JSON.parse(body) as Record<string, unknown> });
const fresh = (): Checkpoint => ({ done: [], judgeFailedRows: [], mainBytes: 0, sidecarBytes: 0, counts: emptyCounts(), strikes: {} });

function counted(r: ReturnType<typeof routeReply>): Checkpoint {
  const cp = fresh();
  r.count(cp.counts, cp);
  return cp;
}

describe('routeReply', () => {
  it('a success goes to the main output, stamped with the exact digits; counts done, reward and latency', () => {
    const r = routeReply(ok('{"reward":1.0,"x":2}'), stamps, row);
    expect(r.target).toBe('main');
    expect(r.line).toBe('{"reward":1.0,"x":2,"_ng_task_index":12345678901234567890,"_ng_rollout_index":1,"agent_ref":{"name":"a"}}');
    const cp = counted(r);
    expect(cp.counts).toMatchObject({ main: 1, failed: 0, latencyMsSum: 12, latencyCount: 1, perAgent: { a: { done: 1, rewardSum: 1 } } });
  });

  it('a judge failure goes to the sidecar and lists its plan index for the next round', () => {
    const r = routeReply(ok('{"reward":0.0,"_ng_failure_class":"judge_failed"}'), stamps, row);
    expect(r.target).toBe('sidecar');
    const cp = counted(r);
    expect(cp.judgeFailedRows).toEqual([7]);
    expect(cp.counts).toMatchObject({ failed: 1, judgeFailed: 1, perAgent: { a: { failed: 1 } } });
  });

  it('_ng_no_persist goes nowhere; a 4xx is a terminal verify_rejected sidecar row; throttled tries are counted, not their latency', () => {
    const dropped = routeReply(ok('{"reward":1.0,"_ng_no_persist":true}'), stamps, { ...row, throttled: 2 });
    expect([dropped.target, dropped.line]).toEqual([null, null]);
    expect(counted(dropped).counts).toMatchObject({ dropped: 1, throttled: 2, latencyCount: 0 });
    // Every answered row adds its time on the judge and its time held back by throttling (the adaptive limit's busy share).
    const held = routeReply(ok('{"reward":1.0}'), stamps, { ...row, throttled: 1, latencyMs: 30, throttleWaitMs: 90 });
    expect(counted(held).counts).toMatchObject({ busyMsSum: 30, throttleWaitMsSum: 90, latencyCount: 0 });
    const rejected = routeReply({ kind: 'rejected', status: 422, excerpt: 'bad' }, stamps, row);
    expect(rejected.target).toBe('sidecar');
    expect(JSON.parse(String(rejected.line))).toMatchObject({
      _ng_failure_class: 'verify_rejected',
      _ng_failure_terminal: true,
      verify_status: 422,
    });
    expect(counted(rejected).counts).toMatchObject({ failed: 1, rejected: 1 });
  });
});

describe('routeReply under the retry rules (--retry-invalid-judge-responses, --retry-terminal-timeouts)', () => {
  const invalid = '{"reward":0.0,"invalid_judge_response":true,"x":1.0}';
  const rules = { retryInvalidJudgeResponses: true, retryTerminalTimeouts: true };

  it('an invalid verdict is a judge_invalid sidecar row (bytes kept, class then stamps) listed for the next round', () => {
    const r = routeReply(ok(invalid), stamps, row, rules);
    expect(r.target).toBe('sidecar');
    expect(r.line).toBe(
      '{"reward":0.0,"invalid_judge_response":true,"x":1.0,"_ng_failure_class":"judge_invalid","_ng_task_index":12345678901234567890,"_ng_rollout_index":1,"agent_ref":{"name":"a"}}',
    );
    const cp = counted(r);
    expect(cp.judgeFailedRows).toEqual([7]);
    expect(cp.counts).toMatchObject({ failed: 1, judgeFailed: 1, main: 0 });
  });

  it('invalid_judge_retryable false: a terminal `permanent` sidecar row, not listed for the next round', () => {
    const r = routeReply(ok('{"reward":0.0,"invalid_judge_response":true,"invalid_judge_retryable":false}'), stamps, row, rules);
    expect(r.target).toBe('sidecar');
    expect(JSON.parse(String(r.line))).toMatchObject({ _ng_failure_class: 'permanent', _ng_failure_terminal: true });
    const cp = counted(r);
    expect(cp.judgeFailedRows).toEqual([]);
    expect(cp.counts).toMatchObject({ failed: 1, judgeFailed: 0 });
  });

  it('without the flag an invalid verdict is a scored row of the main output, byte for byte', () => {
    const r = routeReply(ok(invalid), stamps, row);
    expect(r.target).toBe('main');
    expect(String(r.line).startsWith(invalid.slice(0, -1))).toBe(true);
    expect(r.line).not.toContain('_ng_failure_class');
  });

  it('a terminal timeout verdict is listed for the next round only with --retry-terminal-timeouts', () => {
    const timeout = ok('{"reward":0.0,"_ng_failure_class":"timeout_exceeded","_ng_failure_terminal":true}');
    expect(counted(routeReply(timeout, stamps, row)).judgeFailedRows).toEqual([]);
    expect(counted(routeReply(timeout, stamps, row, rules)).judgeFailedRows).toEqual([7]);
    // Its sidecar row does not stop its key under the rule: listed as an attempt like any other.
    expect(counted(routeReply(timeout, stamps, row, rules)).terminalRows).toBeUndefined();
    const skipped = ok('{"reward":0.0,"_ng_failure_class":"skipped","_ng_failure_terminal":true}');
    expect(counted(routeReply(skipped, stamps, row, rules)).judgeFailedRows).toEqual([]);
  });

  it('a judge failure stamped terminal is listed with its sidecar row marked terminal (the next round drops it)', () => {
    const terminal = ok('{"reward":0.0,"_ng_failure_class":"judge_failed","_ng_failure_terminal":true}');
    for (const rules of [{}, { retryTerminalTimeouts: true }]) {
      const cp = counted(routeReply(terminal, stamps, row, rules));
      expect([cp.judgeFailedRows, cp.terminalRows, cp.withdrawnRows]).toEqual([[7], [7], undefined]);
    }
    const plain = counted(routeReply(ok('{"reward":0.0,"_ng_failure_class":"judge_failed"}'), stamps, row));
    expect([plain.judgeFailedRows, plain.terminalRows]).toEqual([[7], undefined]);
  });
});

describe('routeSetAside', () => {
  it('a row never answered is a transient sidecar row with verify_status null and the reason', () => {
    const err = new VerifierUnavailableError({ serverUrl: 'http://h', tries: 6, lastReason: 'timeout after 300 ms' });
    const r = routeSetAside(stamps, err, 'a');
    expect(JSON.parse(String(r.line))).toMatchObject({
      _ng_failure_class: 'transient',
      verify_status: null,
      verify_error: 'timeout after 300 ms',
    });
    expect(r.line).not.toContain('_ng_failure_terminal');
    expect(counted(r).counts).toMatchObject({ failed: 1, perAgent: { a: { failed: 1 } } });
  });
});

describe('RejectGuard', () => {
  const rej = { kind: 'rejected' as const, status: 422, excerpt: 'ROWTEXTMARKER echoed by the server' };
  it('trips on the limit-th reply when every reply so far was a rejection', () => {
    const g = new RejectGuard(3);
    g.observe(rej, 'rs', 'http://h');
    g.observe(rej, 'rs', 'http://h');
    const err = (() => {
      try {
        g.observe(rej, 'rs', 'http://h');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('VerifyRejected');
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    // It goes into the history: the reply is named by its status, never by its body (it may echo the row).
    expect((err as ApplicationFailure).message).toContain('(last: HTTP 422)');
    expect((err as ApplicationFailure).message).not.toContain('ROWTEXTMARKER');
  });
  it('one success among the first replies, or a limit of 0, never trips', () => {
    const g = new RejectGuard(2);
    g.observe({ kind: 'ok' }, 'rs', 'u');
    expect(() => g.observe(rej, 'rs', 'u')).not.toThrow();
    const off = new RejectGuard(0);
    for (let i = 0; i < 30; i++) expect(() => off.observe(rej, 'rs', 'u')).not.toThrow();
  });
});

describe('BatchRecorder', () => {
  it('writes lines to their part, counts them and marks them done; a snapshot covers exactly what was written', async () => {
    const dir = tmp.freshDir();
    const [main, side] = [join(dir, 'm'), join(dir, 's')];
    const rec = await BatchRecorder.open(main, side, fresh());
    rec.record(0, 'main', '{"a":1}', (c) => c.main++);
    rec.record(1, 'sidecar', '{"b":2}', (c) => c.failed++);
    rec.record(2, null, null, (c) => c.dropped++);
    await rec.flush();
    const snap = rec.snapshot();
    await rec.close();
    expect(readFileSync(main, 'utf8')).toBe('{"a":1}\n');
    expect(readFileSync(side, 'utf8')).toBe('{"b":2}\n');
    expect(snap).toMatchObject({ done: [0, 1, 2], mainBytes: 8, sidecarBytes: 8, counts: { main: 1, failed: 1, dropped: 1 } });
    // Re-opened from that checkpoint (a retried attempt), bytes past it are cut and new rows appended.
    const again = await BatchRecorder.open(main, side, { ...snap, mainBytes: 0 });
    again.record(3, 'main', '{"c":3}', (c) => c.main++);
    await again.close();
    expect(readFileSync(main, 'utf8')).toBe('{"c":3}\n');
  });
});
