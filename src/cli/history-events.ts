/**
 * A run's history read back as its audit trail (`reverify history`): the events of its
 * continue-as-new chain turned into timeline entries and per-row attempts. Pure: the command
 * (history-command.ts) fetches the events. Payloads are decoded with the default payload converter
 * (the run writes `json/plain` payloads: plain JSON text, also in the Temporal UI).
 */
import type { temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import { parseAuditRow, type BatchAudit } from '../contract/batch-audit.js';
import { FailureType } from '../contract/failure-types.js';
import type { BatchResult } from '../contract/run-spec.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

/** One line of the run's timeline. */
export interface TimelineEntry {
  time: string;
  what: string;
}

/** One attempt of one rollout, as the history records it. */
export interface KeyAttempt {
  round: number;
  batch: number;
  /** The activity attempt that recorded the row. */
  attempt: number;
  /** The worker that ran that attempt, when the history names it. */
  worker: string | null;
  /** When the batch's result was recorded. */
  time: string;
  outcome: string;
  status: number | null;
  reward: number | null;
}

/** The `index`th payload of an event, decoded (the run writes `json/plain` payloads). */
export function decode(payloads: Payloads, index = 0): unknown {
  const p = payloads?.payloads?.[index];
  return p ? defaultPayloadConverter.fromPayload(p) : undefined;
}

type Timestamp = temporal.api.history.v1.IHistoryEvent['eventTime'];

/** Milliseconds of a protobuf timestamp or duration (its seconds are a Long or a number). */
function msOf(ts: Timestamp): number | undefined {
  if (!ts) return undefined;
  const s = ts.seconds ?? 0;
  return (typeof s === 'number' ? s : s.toNumber()) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
}

function timeOf(e: HistoryEvent): string {
  const ms = msOf(e.eventTime);
  return ms === undefined ? '' : new Date(ms).toISOString();
}

interface Scheduled {
  type: string;
  summary: string;
  request: { round?: number; batch?: number; from?: number; to?: number } | null;
}

interface Started {
  attempt: number;
  identity: string;
  time: string;
}

/** A batch result as the history records it, with where and when it was recorded. */
export interface RecordedBatch {
  round: number;
  batch: number;
  from: number;
  to: number;
  time: string;
  /** When the attempt that recorded the result started (empty when the history does not say). */
  started: string;
  attempt: number;
  worker: string;
  result: BatchResult;
}

/** What the history of a run says: its timeline and its recorded batch results. */
export interface ReadHistory {
  timeline: TimelineEntry[];
  batches: RecordedBatch[];
}

/** Reads the events of one run or a continue-as-new chain (oldest first). */
export function readHistory(events: HistoryEvent[]): ReadHistory {
  const read: ReadHistory = { timeline: [], batches: [] };
  readRunEvents(read, events, { generation: 0 });
  return read;
}

/**
 * Reads a chain one run at a time, oldest first, so that only one run's events are held (at 10^7
 * rows a chain holds ≈ 130,000 events): `add` each run's events, then read `timeline` and `batches`.
 */
export class HistoryReader implements ReadHistory {
  timeline: TimelineEntry[] = [];
  batches: RecordedBatch[] = [];
  private readonly seen = { generation: 0 };

  add(events: HistoryEvent[]): void {
    readRunEvents(this, events, this.seen);
  }
}

/**
 * Adds what the events of one or more runs say to `read`. A batch's result is kept without its
 * paired units (the live estimate's, ≈ 18 bytes a row: nothing here reads them).
 */
function readRunEvents(read: ReadHistory, events: HistoryEvent[], seen: { generation: number }): void {
  const { timeline, batches } = read;
  const scheduled = new Map<string, Scheduled>();
  const started = new Map<string, Started>();
  const add = (e: HistoryEvent, what: string) => timeline.push({ time: timeOf(e), what });
  for (const e of events) {
    const id = String(e.eventId);
    if (e.workflowExecutionStartedEventAttributes) {
      const started = e.workflowExecutionStartedEventAttributes;
      if (seen.generation++ === 0) add(e, `run started (attempt ${started.attempt ?? 1})`);
      // Not continued from a run: another invocation of the output (`--resume` after the run ended).
      else if (!started.continuedExecutionRunId)
        add(e, 'run started again: a new invocation for this output (the same command after the run ended)');
    } else if (e.activityTaskScheduledEventAttributes) {
      scheduled.set(id, scheduledOf(e, e.activityTaskScheduledEventAttributes));
    } else if (e.activityTaskStartedEventAttributes) {
      const a = e.activityTaskStartedEventAttributes;
      started.set(String(a.scheduledEventId), { attempt: a.attempt ?? 1, identity: a.identity ?? '', time: timeOf(e) });
    } else if (e.activityTaskCompletedEventAttributes) {
      const a = e.activityTaskCompletedEventAttributes;
      const s = scheduled.get(String(a.scheduledEventId));
      const st = started.get(String(a.scheduledEventId));
      const attempts = st && st.attempt > 1 ? ` after ${st.attempt} attempts` : '';
      if (s?.type === 'verifyBatch' && s.request) {
        const { paired: _paired, ...result } = decode(a.result) as BatchResult;
        const r = s.request;
        const rec: RecordedBatch = {
          round: r.round ?? 0,
          batch: r.batch ?? result.batch,
          from: r.from ?? 0,
          to: r.to ?? 0,
          time: timeOf(e),
          started: st?.time ?? '',
          attempt: st?.attempt ?? 1,
          worker: st?.identity ?? '',
          result,
        };
        batches.push(rec);
        add(e, batchLine(s.summary, rec, attempts));
        for (const line of result.audit?.failedAttempts ?? []) timeline.push({ time: '', what: `  failed attempt ${line}` });
        if (result.audit?.failedAttemptsMore)
          timeline.push({ time: '', what: `  and ${result.audit.failedAttemptsMore} more failed attempts` });
      } else if (s) add(e, `${s.summary} done${attempts}`);
    } else if (e.activityTaskFailedEventAttributes) {
      const a = e.activityTaskFailedEventAttributes;
      const s = scheduled.get(String(a.scheduledEventId));
      const st = started.get(String(a.scheduledEventId));
      const type = a.failure?.applicationFailureInfo?.type ?? '';
      // A loan that found nothing to lend to as the round ended (its move and the round's cancel crossed): no failure.
      if (type === FailureType.LoanMoves) add(e, `${s?.summary ?? 'loan'} ended: no row left to lend its lanes to`);
      else add(e, `${s?.summary ?? 'activity'} FAILED (attempt ${st?.attempt ?? '?'}): ${type} ${a.failure?.message ?? ''}`);
    } else if (e.activityTaskCanceledEventAttributes) {
      const s = scheduled.get(String(e.activityTaskCanceledEventAttributes.scheduledEventId));
      add(e, `${s?.summary ?? 'activity'} cancelled`);
    } else if (e.timerStartedEventAttributes) {
      const ms = msOf(e.timerStartedEventAttributes.startToFireTimeout) ?? 0;
      add(e, `waiting ${(ms / 1000).toFixed(1)} s before the next re-judgment round`);
    } else if (e.workflowExecutionUpdateAcceptedEventAttributes) {
      const req = e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input;
      add(e, `operator: ${req?.name ?? 'update'}(${JSON.stringify(decode(req?.args) ?? null)})`);
    } else if (e.workflowExecutionCancelRequestedEventAttributes) {
      add(e, 'operator: cancel requested');
    } else if (e.workflowExecutionContinuedAsNewEventAttributes) {
      add(e, `continued as new (generation ${seen.generation})`);
    } else if (e.workflowExecutionCompletedEventAttributes) {
      add(e, 'run completed');
    } else if (e.workflowExecutionFailedEventAttributes) {
      add(e, `run FAILED: ${e.workflowExecutionFailedEventAttributes.failure?.message ?? ''}`);
    } else if (e.workflowExecutionCanceledEventAttributes) {
      add(e, 'run cancelled');
    } else if (e.workflowExecutionTerminatedEventAttributes) {
      add(e, `run terminated: ${e.workflowExecutionTerminatedEventAttributes.reason ?? ''}`);
    }
  }
}

/** A scheduled activity: its type, its summary (the type when it has none), a batch's request. */
function scheduledOf(e: HistoryEvent, a: NonNullable<HistoryEvent['activityTaskScheduledEventAttributes']>): Scheduled {
  const type = a.activityType?.name ?? '?';
  const text = decode(e.userMetadata?.summary ? { payloads: [e.userMetadata.summary] } : null);
  const summary = typeof text === 'string' ? text : type;
  const request = type === 'verifyBatch' ? (decode(a.input) as Scheduled['request']) : null;
  return { type, summary, request };
}

/** The timeline's line for a batch's recorded result: stopped with its worker, held for the budget, or done. */
function batchLine(summary: string, rec: RecordedBatch, attempts: string): string {
  const result = rec.result;
  if (result.held && result.stopped)
    return `${summary}: stopped with its worker (Ctrl-C, or the worker ended) after ${heldRowsOf(result)} row(s); launched again, the next worker goes on from there (${rec.worker})`;
  if (result.held)
    return `${summary}: held, its request allowance spent (${result.requestsUsed ?? '?'} requests); the rest waits for the budget${attempts} (${rec.worker})`;
  return `${summary}: ${result.main} scored, ${result.failed} failed, ${result.dropped} not persisted${attempts} (${rec.worker})`;
}

/** Rows a held batch had answered (its checkpoint), counted since the start of the batch. */
function heldRowsOf(r: BatchResult): number {
  return r.sofar ? r.sofar.main + r.sofar.failed + r.sofar.dropped : 0;
}

/** The worker of attempt `n` of a batch: the completing attempt's, or the one its failed-attempt line names. */
function workerOf(b: RecordedBatch, n: number, audit: BatchAudit | undefined): string | null {
  if (n === b.attempt) return b.worker;
  const line = audit?.failedAttempts.find((l) => l.startsWith(`a${n} `));
  const w = line?.split(' ')[1];
  return w && w !== 'lost' ? w : null;
}

/** Every attempt of one rollout (`T:R`) that did not reach the main output, from the batch results. */
export function attemptsOfKey(batches: RecordedBatch[], key: string): KeyAttempt[] {
  const found: KeyAttempt[] = [];
  for (const b of batches) {
    for (const line of b.result.audit?.notMain ?? []) {
      const row = parseAuditRow(line);
      if (row?.key !== key) continue;
      const worker = workerOf(b, row.attempt, b.result.audit);
      found.push({
        round: b.round,
        batch: b.batch,
        attempt: row.attempt,
        worker,
        time: b.time,
        outcome: row.cls,
        status: row.status,
        reward: null,
      });
    }
  }
  return found;
}

/** Batches that listed only part of their rows (the rest were counted): a key may be among them. */
export function truncatedBatches(batches: RecordedBatch[]): RecordedBatch[] {
  return batches.filter((b) => (b.result.audit?.notMainMore ?? 0) > 0);
}
