/**
 * An `/aggregate_metrics` reply (spec §2.3) kept on disk: `group_level_metrics` holds one entry
 * per task, hundreds of MB at 10^6 rows, so the reply is written to a file, checked by a streaming
 * pass, and only `key_metrics` (a few numbers, printed in the run's summary) is parsed.
 *
 * The fields are those NeMo Gym 0.7.0's reverify keeps of its reply model (`AggregateMetrics`):
 * `agent_metrics`, `key_metrics`, `group_level_metrics`, `repeat_level_metrics`, in the order it
 * writes them into each agent entry; anything else in the reply (`perf_summary`, …) is not kept.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { nonFiniteAsNull } from '../contract/json-non-finite.js';
import { jsonFileMembers, type ByteSpan } from '../io/json-file-members.js';
import { readRange } from '../io/read-range.js';

/** The kept fields of a reply; each is null when missing or `null` (then written as its `AGGREGATE_FIELD_DEFAULTS`). */
export interface AggregateReplyFile {
  path: string;
  spans: Record<AggregateField, ByteSpan | null>;
  /** `key_metrics`, parsed (`{}` when missing). */
  keyMetrics: Record<string, unknown>;
}

/** The kept fields, in the order of a metrics file entry, each with the text written when the reply lacks it. */
export const AGGREGATE_FIELD_DEFAULTS = {
  agent_metrics: '{}',
  key_metrics: '{}',
  group_level_metrics: '[]',
  repeat_level_metrics: '[]',
} as const;
export type AggregateField = keyof typeof AGGREGATE_FIELD_DEFAULTS;
export const AGGREGATE_FIELDS = Object.keys(AGGREGATE_FIELD_DEFAULTS) as AggregateField[];

/** The reply is not JSON (`kind: 'syntax'`) or not the shape of spec §2.3 (`kind: 'shape'`). */
export class AggregateReplyProblem extends Error {
  constructor(
    readonly kind: 'syntax' | 'shape',
    message: string,
  ) {
    super(message);
  }
}

/** Checks the reply in `path` and finds its fields; throws `AggregateReplyProblem`. */
export async function readAggregateReply(path: string): Promise<AggregateReplyFile> {
  let members: Map<string, ByteSpan>;
  try {
    members = await jsonFileMembers(path);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    // JSON that is not an object (`[…]`, a string…) is the wrong shape; anything else (an HTML error page) is not JSON.
    const kind = /not a JSON object/.test(err.message) && (await startsLikeJsonValue(path)) ? 'shape' : 'syntax';
    throw new AggregateReplyProblem(kind, kind === 'shape' ? '(root): expected an object' : err.message);
  }
  const fh = await open(path, 'r');
  try {
    return { path, ...(await fieldsOf(fh, members)) };
  } finally {
    await fh.close();
  }
}

/** True when the file's first non-blank byte can start a JSON value other than an object. */
async function startsLikeJsonValue(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const head = await readRange(fh, 0, Math.min(256, (await fh.stat()).size));
    return /^[\t\n\r ]*[[\-0-9"tfn]/.test(head);
  } finally {
    await fh.close();
  }
}

async function fieldsOf(fh: FileHandle, members: Map<string, ByteSpan>): Promise<Omit<AggregateReplyFile, 'path'>> {
  const read = (span: ByteSpan, max = Infinity) => readRange(fh, span.start, Math.min(span.end - span.start, max));
  const spans = {} as Record<AggregateField, ByteSpan | null>;
  for (const field of AGGREGATE_FIELDS) {
    const span = members.get(field);
    const head = span ? await read(span, 64) : 'null';
    const expected = AGGREGATE_FIELD_DEFAULTS[field][0];
    if (head.startsWith('null')) spans[field] = null;
    else if (head.startsWith(expected)) spans[field] = span!;
    else
      throw new AggregateReplyProblem(
        'shape',
        `${field}: expected ${expected === '[' ? 'an array' : 'an object'}, got ${head.slice(0, 40)}`,
      );
  }
  let keyMetrics: Record<string, unknown> = {};
  if (spans.key_metrics) {
    try {
      keyMetrics = JSON.parse(nonFiniteAsNull(await read(spans.key_metrics))) as Record<string, unknown>;
    } catch (err) {
      throw new AggregateReplyProblem('syntax', `key_metrics: ${(err as Error).message}`);
    }
  }
  return { spans, keyMetrics };
}
