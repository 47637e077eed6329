import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { keyLines, type KeyReport } from '../../src/cli/history-command.js';
import { attemptsOfKey, HistoryReader, readHistory } from '../../src/cli/history-events.js';

const p = (v: unknown) => defaultPayloadConverter.toPayload(v);
const at = (s: number) => ({ seconds: s, nanos: 0 });

/** A two-run chain: a batch that failed once, an operator's update, a re-judgment wait, a failed activity. */
const events = [
  { eventId: 1, eventTime: at(0), workflowExecutionStartedEventAttributes: { attempt: 1 } },
  {
    eventId: 5,
    eventTime: at(1),
    userMetadata: { summary: p('verify rows 0..9 (batch 1/1)') },
    activityTaskScheduledEventAttributes: {
      activityType: { name: 'verifyBatch' },
      input: { payloads: [p({ round: 0, batch: 0, from: 0, to: 10 })] },
    },
  },
  { eventId: 6, eventTime: at(2), activityTaskStartedEventAttributes: { scheduledEventId: 5, attempt: 2, identity: '7@w2' } },
  {
    eventId: 7,
    eventTime: at(3),
    activityTaskCompletedEventAttributes: {
      scheduledEventId: 5,
      result: {
        payloads: [
          p({
            batch: 0,
            main: 8,
            failed: 2,
            dropped: 0,
            audit: {
              notMain: ['3:1 judge_failed a1', '4:0 transient 503 a2'],
              notMainMore: 0,
              failedAttempts: ['a1 6@w1 1970-01-01T00:00:02.000Z VerifyRowsFailing 503'],
              failedAttemptsMore: 0,
            },
          }),
        ],
      },
    },
  },
  {
    eventId: 8,
    eventTime: at(4),
    workflowExecutionUpdateAcceptedEventAttributes: { acceptedRequest: { input: { name: 'setConcurrency', args: { payloads: [p(4)] } } } },
  },
  { eventId: 9, eventTime: at(5), timerStartedEventAttributes: { startToFireTimeout: at(30) } },
  { eventId: 10, eventTime: at(6), workflowExecutionContinuedAsNewEventAttributes: {} },
  { eventId: 1, eventTime: at(7), workflowExecutionStartedEventAttributes: { attempt: 1, continuedExecutionRunId: 'r1' } },
  {
    eventId: 5,
    eventTime: at(8),
    userMetadata: { summary: p('aggregate: POST /aggregate_metrics per agent') },
    activityTaskScheduledEventAttributes: { activityType: { name: 'aggregateRun' } },
  },
  { eventId: 6, eventTime: at(9), activityTaskStartedEventAttributes: { scheduledEventId: 5, attempt: 1, identity: '7@w2' } },
  {
    eventId: 7,
    eventTime: at(9),
    activityTaskFailedEventAttributes: {
      scheduledEventId: 5,
      failure: { message: 'server rejected', applicationFailureInfo: { type: 'AggregationFailed' } },
    },
  },
  { eventId: 8, eventTime: at(10), workflowExecutionFailedEventAttributes: { failure: { message: 'aggregation failed' } } },
] as unknown as Parameters<typeof readHistory>[0]; // ids and seconds as numbers, where the SDK has Longs

describe('reading a run history back', () => {
  it('reads a chain run by run as it reads it whole, and keeps no paired units', () => {
    const second = events.findIndex((e, i) => i > 0 && e.workflowExecutionStartedEventAttributes);
    expect(second).toBeGreaterThan(0);
    const reader = new HistoryReader();
    reader.add(events.slice(0, second));
    reader.add(events.slice(second));
    const whole = readHistory(events);
    expect(reader.timeline).toEqual(whole.timeline);
    expect(reader.batches).toEqual(whole.batches);
    expect(whole.timeline.some((t) => /continued as new \(generation 1\)/.test(t.what))).toBe(true);

    const withPaired = events.map((e) =>
      Number(e.activityTaskCompletedEventAttributes?.scheduledEventId) === 5
        ? {
            ...e,
            activityTaskCompletedEventAttributes: {
              scheduledEventId: 5,
              result: {
                payloads: [
                  p({ batch: 0, main: 1, failed: 0, dropped: 0, paired: { agents: ['a'], units: [[0, 1, 1, 1, 1, 0, 0, 0, 't']] } }),
                ],
              },
            },
          }
        : e,
    );
    const [batch] = readHistory(withPaired as Parameters<typeof readHistory>[0]).batches;
    expect(batch.result.main).toBe(1);
    expect(batch.result).not.toHaveProperty('paired');
  });

  it('gives the timeline: batches with their failed attempts, operator actions, waits, continue-as-new, failures, the end', () => {
    const { timeline } = readHistory(events);
    expect(timeline.map((t) => `${t.time.slice(17, 19)} ${t.what}`)).toEqual([
      '00 run started (attempt 1)',
      '03 verify rows 0..9 (batch 1/1): 8 scored, 2 failed, 0 not persisted after 2 attempts (7@w2)',
      '   failed attempt a1 6@w1 1970-01-01T00:00:02.000Z VerifyRowsFailing 503',
      '04 operator: setConcurrency(4)',
      '05 waiting 30.0 s before the next re-judgment round',
      '06 continued as new (generation 1)',
      '09 aggregate: POST /aggregate_metrics per agent FAILED (attempt 1): AggregationFailed server rejected',
      '10 run FAILED: aggregation failed',
    ]);
  });

  it('says when a batch was held on the request budget (no counts: nothing of it was committed yet)', () => {
    const held = [
      events[0],
      { ...events[1], userMetadata: { summary: p('verify rows 0..9 (batch 1/1)') } },
      { eventId: 6, eventTime: at(2), activityTaskStartedEventAttributes: { scheduledEventId: 5, attempt: 1, identity: '7@w2' } },
      {
        eventId: 7,
        eventTime: at(3),
        activityTaskCompletedEventAttributes: {
          scheduledEventId: 5,
          result: { payloads: [p({ batch: 0, main: 0, failed: 0, dropped: 0, held: true, requestsUsed: 7 })] },
        },
      },
      {
        eventId: 8,
        eventTime: at(4),
        workflowExecutionUpdateAcceptedEventAttributes: {
          acceptedRequest: { input: { name: 'setMaxRequests', args: { payloads: [p(100)] } } },
        },
      },
    ] as unknown as Parameters<typeof readHistory>[0];
    expect(readHistory(held).timeline.map((t) => t.what)).toEqual([
      'run started (attempt 1)',
      'verify rows 0..9 (batch 1/1): held, its request allowance spent (7 requests); the rest waits for the budget (7@w2)',
      'operator: setMaxRequests(100)',
    ]);
  });

  it("gives a key's attempts with the worker of the attempt that recorded each", () => {
    const { batches } = readHistory(events);
    expect(attemptsOfKey(batches, '4:0')).toEqual([
      { round: 0, batch: 0, attempt: 2, worker: '7@w2', time: '1970-01-01T00:00:03.000Z', outcome: 'transient', status: 503, reward: null },
    ]);
    expect(attemptsOfKey(batches, '3:1')[0].worker).toBe('6@w1');
    const report: KeyReport = { key: '3:1', attempts: attemptsOfKey(batches, '3:1'), main: null, incomplete: [] };
    expect(keyLines(report)).toEqual([
      'Rollout 3:1: 1 attempt(s) not in the main output',
      '  round 1, batch 1, activity attempt 1, worker 6@w1, 1970-01-01T00:00:03.000Z: judge_failed',
    ]);
  });

  it('a loan that failed with LoanMoves as the round ended is no failure in the timeline', () => {
    const loanEvents = [
      { eventId: 1, eventTime: at(0), workflowExecutionStartedEventAttributes: { attempt: 1 } },
      {
        eventId: 2,
        eventTime: at(1),
        userMetadata: { summary: p('lend 32 /verify lane(s) to the last batches') },
        activityTaskScheduledEventAttributes: { activityType: { name: 'lendLanes' }, input: { payloads: [p({ round: 0, lanes: 32 })] } },
      },
      { eventId: 3, eventTime: at(2), activityTaskStartedEventAttributes: { scheduledEventId: 2, attempt: 3, identity: '7@w2' } },
      {
        eventId: 4,
        eventTime: at(3),
        activityTaskFailedEventAttributes: {
          scheduledEventId: 2,
          failure: { message: 'no row left', applicationFailureInfo: { type: 'LoanMoves' } },
        },
      },
    ] as unknown as Parameters<typeof readHistory>[0];
    const { timeline } = readHistory(loanEvents);
    expect(timeline.map((t) => t.what)).toContain('lend 32 /verify lane(s) to the last batches ended: no row left to lend its lanes to');
    expect(timeline.map((t) => t.what).join('\n')).not.toMatch(/FAILED/);
  });
});
