import { oneLineJson } from '../contract/one-line-json.js';
import { bodyExcerpt, truncateOneLine } from './excerpt.js';
import { parseRetryAfterMs } from './retry-after.js';
import { replyText } from './whole-reply.js';

/**
 * The outcome of one `POST /verify`, as the wire says it (no body parsed yet: `settleReply`).
 *
 * - `ok`: a 2xx; `body` is its body as received (bytes: `settleReply` decodes it, off the path
 *   between a reply and the next request).
 * - `rejected`: the server answered and retrying the same request will not help: a 4xx other than
 *   408/429, or a 3xx. `excerpt` is one line, at most 300 characters.
 * - `retryable`: transport errors (refused, reset, socket closed, DNS), the request timeout,
 *   408, 429 and 5xx. `retryAfterMs` comes from a `Retry-After` header (seconds or HTTP-date).
 */
export type VerifyReply =
  | { kind: 'ok'; status: number; body: Buffer }
  | Rejected
  | {
      kind: 'retryable';
      reason: string;
      status?: number;
      /** The body's excerpt when the server answered. */ excerpt?: string;
      retryAfterMs?: number;
    };

type Rejected = { kind: 'rejected'; status: number; excerpt: string };

/**
 * An answered reply with its body parsed: `ok` when the 2xx body is a JSON object, with `body` its
 * text on one line (an indented reply loses the whitespace between its tokens, `oneLineJson`;
 * callers must not re-serialize it: large integers would be rounded) and `result` parsed;
 * otherwise `rejected` (a contract violation by the server: the request is deterministic, so
 * repeating it is not expected to fix it; the excerpt starts with `reply is not a JSON object:`).
 */
export type SettledReply = { kind: 'ok'; status: number; body: string; result: Record<string, unknown> } | Rejected;

/**
 * Classify a complete `/verify` reply by its status. A 2xx body is parsed later (`settleReply`),
 * off the path between a reply and the next request.
 */
export function classifyVerifyReply(status: number, retryAfter: string | string[] | undefined, body: Buffer): VerifyReply {
  if (status >= 200 && status <= 299) return { kind: 'ok', status, body };
  const text = replyText(body);
  if (status === 408 || status === 429 || status >= 500) {
    const excerpt = bodyExcerpt(text);
    // The reason reaches messages and the workflow history: never the body, which may echo the row
    // (the excerpt goes only into the sidecar row of a row set aside).
    const reply: VerifyReply = { kind: 'retryable', reason: `HTTP ${status}`, status, excerpt };
    const retryAfterMs = parseRetryAfterMs(retryAfter);
    if (retryAfterMs !== undefined) reply.retryAfterMs = retryAfterMs;
    return reply;
  }
  return { kind: 'rejected', status, excerpt: bodyExcerpt(text) };
}

/**
 * How a message, a log line or the workflow history names a rejected reply: its status and a fixed
 * class, never its body, which may echo the row (the excerpt goes only into the row's sidecar line).
 */
export function rejectedReplyName(status: number): string {
  return status >= 200 && status <= 299 ? `HTTP ${status} (not a JSON object)` : `HTTP ${status}`;
}

/** Parses an answered reply's body (see `SettledReply`). */
export function settleReply(reply: Exclude<VerifyReply, { kind: 'retryable' }>): SettledReply {
  if (reply.kind === 'rejected') return reply;
  const text = replyText(reply.body);
  const result = parseJsonObject(text);
  if (result) return { kind: 'ok', status: reply.status, body: oneLineJson(text), result };
  return {
    kind: 'rejected',
    status: reply.status,
    excerpt: truncateOneLine(`reply is not a JSON object: ${bodyExcerpt(text)}`),
  };
}

/** The body as a JSON object, or null if it is not exactly one. */
function parseJsonObject(text: string): Record<string, unknown> | null {
  // Cheap shape check first; then a full parse to be sure the body is one valid JSON object.
  const start = text.search(/\S/);
  if (start < 0 || text[start] !== '{') return null;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
