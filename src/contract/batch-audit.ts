/**
 * The audit trail a batch leaves in the workflow history (DESIGN.md "The history is the journal and
 * the audit trail"): every row that did not reach the main output, and every failed activity
 * attempt, each as one short line of text. Compact and bounded: keys, classes, statuses, attempt
 * numbers, worker names and times; never row content, reply bodies or error messages (they may
 * quote a row or a URL). The workflow only carries these lines; the CLI (`reverify history`) reads them.
 */

/** Rows listed per batch result; the rest are counted (`notMainMore`), keeping the history bounded. */
export const AUDIT_ROWS_MAX = 200;
/** Failed attempts listed per batch; the rest are counted. */
export const AUDIT_ATTEMPTS_MAX = 20;
/** A key's text is cut to this many characters (keys are indices, but strings are allowed). */
const KEY_MAX_CHARS = 60;

/** What a batch result says of the rows and attempts behind its counts. */
export interface BatchAudit {
  /** One line per row not in the main output: `T:R class [status] aN` (see `auditRow`). */
  notMain: string[];
  /** Rows not in the main output beyond `AUDIT_ROWS_MAX`. */
  notMainMore: number;
  /** One line per failed activity attempt: `aN worker time type [status]` (see `attemptLine`). */
  failedAttempts: string[];
  failedAttemptsMore: number;
}

export function emptyAudit(): BatchAudit {
  return { notMain: [], notMainMore: 0, failedAttempts: [], failedAttemptsMore: 0 };
}

/** The key as `--key` takes it: the raw texts of `_ng_task_index` and `_ng_rollout_index`, `T:R`. */
export function auditKey(task: string, rollout: string): string {
  const key = `${task}:${rollout}`.replace(/\s+/g, '');
  return key.length > KEY_MAX_CHARS ? key.slice(0, KEY_MAX_CHARS - 1) + '…' : key;
}

/** `12:3 judge_failed a1`, `12:4 verify_rejected 422 a2`, `7:0 transient 503 a3`, `5:1 dropped a1`. */
export function auditRow(key: string, cls: string, status: number | null, attempt: number): string {
  const c = /^[\w.-]{1,40}$/.test(cls) ? cls : 'other';
  return `${key} ${c}${status !== null ? ` ${status}` : ''} a${attempt}`;
}

/** One failed attempt: `a2 1234@host 2026-12-01T12:00:03.000Z RowsFailing 503`, or `a2 lost` (no report). */
export function attemptLine(attempt: number, worker: string, at: Date, type: string, status: number | null): string {
  return `a${attempt} ${worker} ${at.toISOString()} ${type}${status !== null ? ` ${status}` : ''}`;
}

/** An attempt that left no report: its worker died or stopped heartbeating. */
export function lostAttemptLine(attempt: number): string {
  return `a${attempt} lost (no report: the worker died or stopped heartbeating)`;
}

export function noteRow(audit: BatchAudit, line: string): void {
  if (audit.notMain.length < AUDIT_ROWS_MAX) audit.notMain.push(line);
  else audit.notMainMore++;
}

export function noteAttempt(audit: BatchAudit, line: string): void {
  if (audit.failedAttempts.length < AUDIT_ATTEMPTS_MAX) audit.failedAttempts.push(line);
  else audit.failedAttemptsMore++;
}

/** The highest attempt number the audit names (0: none). */
export function lastNotedAttempt(audit: BatchAudit): number {
  let n = 0;
  for (const l of audit.failedAttempts) n = Math.max(n, Number(/^a(\d+)/.exec(l)?.[1] ?? 0));
  return n;
}

/** A row line parsed back: key, class, status, attempt. */
export interface AuditRow {
  key: string;
  cls: string;
  status: number | null;
  attempt: number;
}

export function parseAuditRow(line: string): AuditRow | null {
  const m = /^(\S+) (\S+)(?: (\d{3}))? a(\d+)$/.exec(line);
  return m ? { key: m[1], cls: m[2], status: m[3] ? Number(m[3]) : null, attempt: Number(m[4]) } : null;
}
