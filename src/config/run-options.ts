/**
 * Options of `reverify run` (spec §4.0), validated at the CLI boundary. Field names are ours
 * (camelCase); each comment names the NeMo Gym config key it mirrors. Errors name the flag.
 */
import { z } from 'zod';
import {
  atifNeedsManifest,
  atifWithForce,
  atifWithRecovery,
  atifWithResume,
  atifWithRollouts,
  gymNeedsRollouts,
  INPUT_FORMATS,
  manifestNeedsAtif,
  type InputFormat,
} from '../contract/atif-messages.js';
import { ConfigError } from '../contract/errors.js';
import { appendAndOverwrite, appendNeedsJudgeFailedOnly, extendNeedsResume, greaterOrEqualOne } from '../contract/messages.js';
import {
  DEFAULT_BATCH_SIZE,
  DEFAULT_CONCURRENCY,
  DEFAULT_CONFIDENCE,
  DEFAULT_PLAN_ORDER,
  DEFAULT_REJUDGE_DELAY_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  PLAN_ORDERS,
} from './run-defaults.js';
import { RUN_FLAG_LIST, RUN_FLAGS } from './run-flags.js';
import { parseServerFlag } from './routing.js';
import { gateRefusal } from './fail-if.js';
import { stopRulesOf, stopRulesRefusal } from './stop-when.js';

export { RUN_FLAGS } from './run-flags.js';

/** Options given in seconds on the command line and held in ms: messages show the seconds. */
const MS_PER_FLAG_UNIT: Record<string, number> = Object.fromEntries(
  RUN_FLAG_LIST.filter((f) => f.kind === 'seconds' && f.key !== null).map((f) => [f.key!, 1000]),
);

export { DEFAULT_BATCH_SIZE, DEFAULT_CONCURRENCY, DEFAULT_REJUDGE_DELAY_MS, DEFAULT_REQUEST_TIMEOUT_MS } from './run-defaults.js';

/** CLI parsers hand over strings: accept integer text (`"4"`, `" 4 "`) for count options. */
function intFromText(v: unknown): unknown {
  return typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v) ? Number(v) : v;
}

function numberFromText(v: unknown): unknown {
  return typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
}

function boolFromText(v: unknown): unknown {
  if (v === 'true') return true;
  if (v === 'false') return false;
  return v;
}

function listFromOne(v: unknown): unknown {
  return typeof v === 'string' ? [v] : v;
}

const count = () => z.preprocess(intFromText, z.int().min(1));
const flag = () => z.preprocess(boolFromText, z.boolean()).default(false);
/** A policy saved with the run: absent keeps the saved one (src/cli/saved-policy.ts). */
const policy = () => z.preprocess(boolFromText, z.boolean()).optional();
const path = () => z.string().trim().min(1);
const list = () => z.preprocess(listFromOne, z.array(z.string())).default([]);

/**
 * The `reverify run` options: how each is validated. What each means, its flag and its default as
 * shown are declared once, in run-flags.ts (help, the docs/usage.md table and messages derive from there).
 */
export const RunOptionsSchema = z
  .object({
    inputs: path(),
    rollouts: path().optional(),
    inputFormat: z.enum(INPUT_FORMATS).default('gym'),
    atifManifest: path().optional(),
    output: path(),
    configs: list(),
    servers: list(),
    concurrency: count().default(DEFAULT_CONCURRENCY),
    limit: count().optional(),
    order: z.enum(PLAN_ORDERS).default(DEFAULT_PLAN_ORDER),
    orderSeed: z
      .preprocess(
        intFromText,
        z
          .int()
          .min(0)
          .max(2 ** 31 - 1),
      )
      .optional(),
    force: flag(),
    overwrite: flag(),
    resume: flag(),
    judgeFailedOnly: flag(),
    append: flag(),
    retryInvalidJudgeResponses: flag(),
    retryTerminalTimeouts: policy(),
    dispatchLongestFirst: policy(),
    disableAggregation: flag(),
    repairTruncated: flag(),
    allowUnsafe: flag(),
    rejudge: z.preprocess(boolFromText, z.boolean()).default(true),
    upload: z.preprocess(boolFromText, z.boolean()).default(true),
    rejudgeDelayMs: z.preprocess(intFromText, z.int().min(0)).default(DEFAULT_REJUDGE_DELAY_MS),
    maxAttempts: count().optional(),
    maxRequests: count().optional(),
    confidence: z.preprocess(numberFromText, z.number().gt(0).lt(1)).default(DEFAULT_CONFIDENCE),
    failIf: list(),
    extendAttempts: count().optional(),
    noiseSample: z.preprocess(intFromText, z.int().min(0)).optional(),
    rejudgeSaved: z.string().min(1).optional(),
    dryRun: flag(),
    requestTimeoutMs: count().default(DEFAULT_REQUEST_TIMEOUT_MS),
    batchSize: count().default(DEFAULT_BATCH_SIZE),
    stopWhen: list().transform(stopRulesOf),
  })
  .superRefine((o, ctx) => {
    for (const s of o.servers) {
      try {
        parseServerFlag(s);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['servers'], message: (err as Error).message });
        return;
      }
    }
    // The order of NeMo Gym's validator: the first rule that applies is the one reported.
    const refusal = combinationRefusal(o);
    if (refusal !== null) ctx.addIssue({ code: 'custom', path: [], message: refusal });
    else if (o.extendAttempts !== undefined && !o.resume) ctx.addIssue({ code: 'custom', path: [], message: extendNeedsResume() });
    else if (o.rejudgeSaved !== undefined && (!o.resume || o.judgeFailedOnly || o.inputFormat === 'atif'))
      ctx.addIssue({ code: 'custom', path: [], message: REJUDGE_SAVED_NEEDS_RESUME });
    else if (o.allowUnsafe && !o.resume) ctx.addIssue({ code: 'custom', path: [], message: ALLOW_UNSAFE_NEEDS_RESUME });
    else if (o.dryRun && o.rejudgeSaved === undefined) ctx.addIssue({ code: 'custom', path: [], message: DRY_RUN_NEEDS_REJUDGE_SAVED });
    else if (o.order === 'random' && o.inputFormat === 'atif') ctx.addIssue({ code: 'custom', path: [], message: RANDOM_ORDER_NOT_ATIF });
    else if (o.dispatchLongestFirst === true && o.inputFormat === 'atif')
      ctx.addIssue({ code: 'custom', path: [], message: LONGEST_FIRST_NOT_ATIF });
    else if (o.dispatchLongestFirst === true && o.order === 'random') ctx.addIssue({ code: 'custom', path: [], message: TWO_ORDERS });
    else {
      const refusal = stopRulesRefusal(o) ?? gateRefusal(o);
      if (refusal !== null) ctx.addIssue({ code: 'custom', path: [], message: refusal });
    }
  });

const LONGEST_FIRST_NOT_ATIF =
  '--dispatch-longest-first is not available with --input-format atif (its plan keeps the manifest order): leave it out';
export const TWO_ORDERS =
  '--order random and --dispatch-longest-first ask for two orders of dispatch: keep one (with --resume, --no-dispatch-longest-first turns off a saved longest-first)';
const REJUDGE_SAVED_NEEDS_RESUME =
  '--rejudge-saved re-verifies rows saved in an existing output: give it with --resume (not with --judge-failed-only or --input-format atif)';
const ALLOW_UNSAFE_NEEDS_RESUME =
  '--allow-unsafe lets a --resume take other --inputs/--rollouts than the run was started with: give it with --resume';
const DRY_RUN_NEEDS_REJUDGE_SAVED = '--dry-run checks a --rejudge-saved selection: give --rejudge-saved KEYS with it';

const RANDOM_ORDER_NOT_ATIF =
  '--order random is not available with --input-format atif (its plan keeps the manifest order): use --order file, or leave --order out';

/** The first flag combination NeMo Gym 0.7.0 refuses (its validator's order), or null. */
function combinationRefusal(o: {
  append: boolean;
  judgeFailedOnly: boolean;
  overwrite: boolean;
  force: boolean;
  resume: boolean;
  inputFormat: InputFormat;
  rollouts?: string;
  atifManifest?: string;
}): string | null {
  if (o.append && !o.judgeFailedOnly) return appendNeedsJudgeFailedOnly();
  if (o.append && o.overwrite) return appendAndOverwrite();
  if (o.inputFormat === 'gym') {
    if (o.rollouts === undefined) return gymNeedsRollouts();
    if (o.atifManifest !== undefined) return manifestNeedsAtif();
    return null;
  }
  if (o.atifManifest === undefined) return atifNeedsManifest();
  if (o.rollouts !== undefined) return atifWithRollouts();
  if (o.judgeFailedOnly || o.append) return atifWithRecovery();
  if (o.force) return atifWithForce();
  if (o.resume) return atifWithResume();
  return null;
}

/** Validated `reverify run` options (defaults applied). */
export type RunOptions = z.output<typeof RunOptionsSchema>;

function shown(v: unknown): string {
  return JSON.stringify(v) ?? String(v);
}

function issueText(issue: z.core.$ZodIssue, raw: unknown): string {
  if (issue.code === 'custom') return issue.message;
  const field = String(issue.path[0] ?? '');
  const flagName = RUN_FLAGS[field] ?? field;
  const value = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)[field] : undefined;
  const scale = MS_PER_FLAG_UNIT[field];
  const given = scale !== undefined && typeof value === 'number' ? value / scale : value;
  if (issue.code === 'too_small') {
    if (issue.origin === 'string') return `${flagName} is required`;
    if (scale !== undefined) {
      const bound = Number((issue as { minimum?: unknown }).minimum) === 0 ? '0 or more' : 'greater than 0';
      return `${flagName} takes a number of seconds ${bound}, got ${shown(given)}`;
    }
    return greaterOrEqualOne(flagName, given);
  }
  if (issue.code === 'too_big') return `${flagName} is too large (got ${shown(given)})`;
  if (given === undefined) return `${flagName} is required`;
  if (issue.code === 'invalid_type') {
    const expected = String((issue as { expected?: unknown }).expected);
    if (expected === 'int' || expected === 'number') return `${flagName} must be an integer, got ${shown(given)}`;
    if (expected === 'boolean') return `${flagName} is a switch (true or false), got ${shown(given)}`;
    if (expected === 'array' || issue.path.length > 1) return `${flagName} takes text values, got ${shown(given)}`;
    if (expected === 'string') return `${flagName} must be a path, got ${shown(given)}`;
  }
  return `${flagName}: ${issue.message}`;
}

/**
 * Validates raw `run` options (e.g. from the CLI parser: counts may be integer strings) and applies
 * defaults. Throws `ConfigError` with the first problem as one line naming the flag, including the
 * cross-field rules of spec §4.0 (§6 checks 1–9) with their exact texts.
 */
export function parseRunOptions(raw: unknown): RunOptions {
  const r = RunOptionsSchema.safeParse(raw ?? {});
  if (r.success) return r.data;
  throw new ConfigError(issueText(r.error.issues[0], raw));
}
