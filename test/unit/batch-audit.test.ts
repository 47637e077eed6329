import { describe, expect, it } from 'vitest';
import {
  AUDIT_ATTEMPTS_MAX,
  AUDIT_ROWS_MAX,
  attemptLine,
  auditKey,
  auditRow,
  emptyAudit,
  lastNotedAttempt,
  lostAttemptLine,
  noteAttempt,
  noteRow,
  parseAuditRow,
} from '../../src/contract/batch-audit.js';
import { detailsOf } from '../../workflows/details.js';
import { initialState } from '../../workflows/run-state.js';
import type { RunSpec } from '../../src/contract/run-spec.js';

describe('batch audit lines', () => {
  it('name a row by key, class, status and attempt, and parse back', () => {
    expect(auditRow(auditKey('12', '3'), 'judge_failed', null, 1)).toBe('12:3 judge_failed a1');
    expect(auditRow('12:4', 'verify_rejected', 422, 2)).toBe('12:4 verify_rejected 422 a2');
    expect(parseAuditRow('12:4 verify_rejected 422 a2')).toEqual({ key: '12:4', cls: 'verify_rejected', status: 422, attempt: 2 });
    expect(parseAuditRow('"a b":0 transient a3')).toBeNull(); // never produced: auditKey removes spaces
    expect(auditKey('"a b"', '0')).toBe('"ab":0');
  });

  it('never carry a class that is not a short name (it comes from a reply body)', () => {
    expect(auditRow('1:0', 'judge failed: see https://x', null, 1)).toBe('1:0 other a1');
  });

  it('cut long keys', () => {
    expect(auditKey(`"${'x'.repeat(200)}"`, '0').length).toBe(60);
  });

  it('are bounded per batch: the rest are counted', () => {
    const a = emptyAudit();
    for (let i = 0; i < AUDIT_ROWS_MAX + 5; i++) noteRow(a, auditRow(`${i}:0`, 'judge_failed', null, 1));
    for (let i = 1; i <= AUDIT_ATTEMPTS_MAX + 2; i++) noteAttempt(a, lostAttemptLine(i));
    expect(a.notMain).toHaveLength(AUDIT_ROWS_MAX);
    expect(a.notMainMore).toBe(5);
    expect(a.failedAttempts).toHaveLength(AUDIT_ATTEMPTS_MAX);
    expect(a.failedAttemptsMore).toBe(2);
    expect(lastNotedAttempt(a)).toBe(AUDIT_ATTEMPTS_MAX);
  });

  it('name a failed attempt by number, worker, time, type and status', () => {
    expect(attemptLine(2, '7@host', new Date(0), 'VerifierUnavailableError', 503)).toBe(
      'a2 7@host 1970-01-01T00:00:00.000Z VerifierUnavailableError 503',
    );
  });
});

describe("the workflow's current details (Temporal UI)", () => {
  it('show the phase, counts, concurrency and output', () => {
    const st = initialState({ concurrency: 8 } as RunSpec);
    st.phase = 'verify';
    st.round = 1;
    st.totals.main = 90;
    st.totals.failed = 10;
    st.totals.judgeFailed = 7;
    st.planned = 200;
    st.outputs = { output: '/data/out.jsonl', sidecar: '', metrics: '', workDir: '' };
    const text = detailsOf(st, new Map([[3, { round: 1, rows: 16, slots: 4 }]]));
    expect(text).toContain('**Phase:** verify (re-judge round 2)');
    expect(text).toContain('90 scored · 10 failed (7 judge failures, 0 rejected)');
    // In rows, at most the batch's /verify slots; the answered rows never above the plan.
    // The counts first (the line a user reads on the run's page), then the phase.
    expect(text.split('\n\n')[0]).toBe(
      '**Rows:** 100/200 answered · 90 scored · 10 failed (7 judge failures, 0 rejected) · 0 not persisted · 4 in flight',
    );
    expect(text).toContain('concurrency 8/8');
    expect(text).toContain('**Output:** /data/out.jsonl');
  });
});
