import { REVERIFY_MODES } from '../contract/reverify-mode.js';
import { z } from 'zod';
import { parseInvalidJudgeRules } from './invalid-judge.js';

/** A probability in [0, 1]; numeric strings (CLI flags) are accepted. */
const probability = z.coerce.number().min(0).max(1).default(0);

/** Comma-separated `task:rollout[@N]` entries, as one string (a CLI flag) or a list. */
const keyList = z
  .union([z.string(), z.array(z.string())])
  .default([])
  .superRefine((given, ctx) => {
    try {
      parseInvalidJudgeRules(given, true);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

/** What the reference server answers on `GET /reverify_mode` (spec §2.1). */
export const reverifyModeSchema = z.enum(REVERIFY_MODES);

/** The three `/reverify_mode` values. */
export type ReverifyMode = z.infer<typeof reverifyModeSchema>;

/**
 * Options of the reference resources server. Numbers may be given as strings (CLI flags).
 *
 * The four failure rates are probabilities of the whole: one uniform draw per valid `/verify`
 * request picks hang, reset, error or judge failure (checked in that order, cumulatively), and
 * the rest succeed. If the rates sum above 1, the earlier outcomes take precedence.
 */
export const referenceServerOptionsSchema = z.object({
  /** TCP port to listen on; 0 picks a free port (read it back from `ReferenceServer.port`). */
  port: z.coerce.number().int().min(0).max(65_535).default(0),
  /** Interface to bind; the default only accepts local connections. */
  host: z.string().min(1).default('127.0.0.1'),
  /** Value reported by `GET /reverify_mode`. */
  mode: reverifyModeSchema.default('stateless'),
  /** Delay before each `/verify` outcome is carried out, in milliseconds (simulates a judge). */
  latencyMs: z.coerce.number().min(0).default(0),
  /**
   * Spread of the delay: each `/verify` waits `latencyMs` times e^(σ·N(0,1)) (a log-normal delay
   * whose median is `latencyMs`), σ being this value; 0 (the default) waits exactly `latencyMs`.
   * LLM judges answer so: most rows near the median, a few many times slower (σ = 1: the slowest
   * in a hundred take 10 × the median). Drawn from its own seeded stream: the outcomes stay those
   * of the same seed without it.
   */
  latencySpread: z.coerce.number().min(0).max(4).default(0),
  /** Share of `/verify` requests answered 200 with `_ng_failure_class: "judge_failed"`. */
  judgeFailRate: probability,
  /** Share of `/verify` requests answered HTTP 500 (an unhandled RS exception). */
  errorRate: probability,
  /** Share of `/verify` requests whose connection is reset without any response. */
  resetRate: probability,
  /** Share of `/verify` requests never answered (the socket stays open until the client gives up). */
  hangRate: probability,
  /**
   * Rows whose judge verdict is flagged `invalid_judge_response` (retryable): `task:rollout[@N]`
   * entries, comma-separated (invalid-judge.ts); `@N` flags only the row's first N gradings.
   */
  invalidJudge: keyList,
  /** Like `invalidJudge`, with `invalid_judge_retryable: false` (asking again would not help). */
  permanentInvalidJudge: keyList,
  /**
   * Answer `/verify` with indented JSON (line breaks between members), as servers that
   * pretty-print do; the values are the same.
   */
  pretty: z.coerce.boolean().default(false),
  /**
   * Requests per minute the server takes on `/verify` (0: no limit). Beyond it a request is
   * answered 429 with a `Retry-After` that says when its token comes (request-quota.ts).
   */
  rpm: z.coerce.number().min(0).default(0),
  /** Tokens of the quota that can be saved up (0: one second's worth of `rpm`, at least 1). */
  rpmBurst: z.coerce.number().int().min(0).default(0),
  /** Seed of the PRNG that draws the outcomes; equal seeds and request order give equal outcomes. */
  seed: z.coerce.number().int().default(1),
});

/** Parsed, defaulted options of the reference server. */
export type ReferenceServerOptions = z.infer<typeof referenceServerOptionsSchema>;
