/**
 * What the client makes of the answers to its probes and its aggregate request: `GET /reverify_mode`
 * (contract §2.1: a mode, else a one-line ConfigError naming the server and what to do) and the
 * reply file of `POST /aggregate_metrics` (checked, else an AggregateMetricsError).
 */
import { open } from 'node:fs/promises';
import { AggregateReplyProblem, readAggregateReply, type AggregateReplyFile } from '../aggregation/aggregate-reply.js';
import { ConfigError } from '../contract/errors.js';
import { isReverifyMode, type ReverifyMode } from '../contract/reverify-mode.js';
import { DeadlineExceeded, formatMs } from './deadlines.js';
import { AggregateMetricsError } from './errors.js';
import { bodyExcerpt, truncateOneLine } from './excerpt.js';
import { describeTransportError, isUsageError } from './transport-errors.js';

/** How the messages about a server's `GET /reverify_mode` name it, and what they tell the user to do. */
export function modeProbeNames(serverName: string, serverUrl: string): { who: string; fix: string } {
  return {
    who: `resources server '${serverName}' at ${serverUrl}`,
    fix: `fix its host/port in the config or pass --server ${serverName}=URL`,
  };
}

/** The error for a `GET /reverify_mode` that got no answer (a usage error is returned unchanged). */
export function unanswered(err: unknown, who: string, fix: string): unknown {
  if (err instanceof DeadlineExceeded) {
    return new ConfigError(
      `${who} did not answer GET /reverify_mode within ${formatMs(err.timeoutMs)}: check that it is running and not overloaded, or ${fix}`,
    );
  }
  if (isUsageError(err)) return err;
  return new ConfigError(`${who} is not reachable (${describeTransportError(err)}): start it, or ${fix}`);
}

/** The mode a `GET /reverify_mode` answered, or the ConfigError saying what is wrong with the answer. */
export function reverifyModeOf(status: number, text: string, who: string, fix: string): ReverifyMode {
  if (status === 404) {
    throw new ConfigError(`${who} has no GET /reverify_mode route (HTTP 404): is it a NeMo Gym resources server? Check the URL, or ${fix}`);
  }
  if (status < 200 || status > 299) {
    throw new ConfigError(
      `${who} answered GET /reverify_mode with HTTP ${status}: ${bodyExcerpt(text)}; fix the server (see its log) and try again`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (isReverifyMode(value)) {
    return value;
  }
  const shown = typeof value === 'string' ? JSON.stringify(value) : truncateOneLine(text, 120) || '(empty body)';
  throw new ConfigError(
    `${who} answered GET /reverify_mode with ${shown}, expected one of "stateless", "unsupported", "unknown": update the resources server to a NeMo Gym version with reverify support`,
  );
}

/** The checked reply of a `POST /aggregate_metrics` that got an answer with `status`, written at `replyPath`. */
export async function checkedAggregateReply(
  serverName: string,
  serverUrl: string,
  replyPath: string,
  status: number,
): Promise<AggregateReplyFile> {
  if (status < 200 || status > 299) {
    throw new AggregateMetricsError(serverName, serverUrl, `HTTP ${status}: ${bodyExcerpt(await fileHead(replyPath))}`, status);
  }
  try {
    return await readAggregateReply(replyPath);
  } catch (err) {
    if (!(err instanceof AggregateReplyProblem)) throw err;
    const detail =
      err.kind === 'syntax'
        ? `reply is not JSON (${err.message}): ${bodyExcerpt(await fileHead(replyPath))}`
        : `unexpected reply (${err.message})`;
    throw new AggregateMetricsError(serverName, serverUrl, detail, status);
  }
}

/** The first KiB of a file, as text (for an excerpt of an error reply). */
async function fileHead(path: string): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.toString('utf8', 0, bytesRead);
  } finally {
    await fh.close();
  }
}
