import type { IncomingMessage, ServerResponse } from 'node:http';
import { CARRIED_ROLLOUT_KEYS } from '../contract/keys.js';
import { gradeMcqa } from './grading.js';
import { InvalidJudges, parseInvalidJudgeRules, type InvalidJudgeFields } from './invalid-judge.js';
import { pythonExceptionBody, readBody, sendJson, sendJsonText } from './http-util.js';
import type { ReferenceServerOptions } from './options.js';
import { mulberry32 } from './prng.js';
import { RequestQuota, retryAfterHeader } from './request-quota.js';
import type { StatsRecorder, VerifyOutcome } from './server-stats.js';
import { jsonInvalid, verifyRequestIssues } from './validation.js';

/** `_ng_failure_judge_error` of a simulated judge failure. */
export const SIMULATED_JUDGE_ERROR = 'JudgeError: simulated judge failure';

/** Keys the client stamps itself; real resources servers do not echo them. */
const CLIENT_STAMPED_KEYS = new Set(['_ng_task_index', '_ng_rollout_index', 'agent_ref']);

const ERROR_BODY = pythonExceptionBody('RuntimeError', 'simulated resources server error');

type FailureRates = Pick<ReferenceServerOptions, 'hangRate' | 'resetRate' | 'errorRate' | 'judgeFailRate'>;

/** Picks the outcome of a uniform draw `u` in [0, 1): cumulative rates, in the documented order. */
export function drawOutcome(u: number, rates: FailureRates): VerifyOutcome {
  const ordered: [VerifyOutcome, number][] = [
    ['hang', rates.hangRate],
    ['reset', rates.resetRate],
    ['error', rates.errorRate],
    ['judge_failed', rates.judgeFailRate],
  ];
  let threshold = 0;
  for (const [outcome, rate] of ordered) {
    threshold += rate;
    if (u < threshold) return outcome;
  }
  return 'success';
}

/**
 * Success body: the echoed params and response plus the mcqa grade (with an invalid verdict's
 * fields, if any), and the rollout's verifier inputs NeMo Gym 0.7.0 carries into the request
 * (`deliverables_dir`, `reference_ids`) when it has them, echoed as a file-backed verifier's
 * request model echoes them.
 */
function successBody(request: Record<string, unknown>, invalid: InvalidJudgeFields | null): Record<string, unknown> {
  const carried: Array<[string, unknown]> = CARRIED_ROLLOUT_KEYS.filter((k) => Object.hasOwn(request, k)).map((k) => [k, request[k]]);
  return {
    responses_create_params: request.responses_create_params,
    response: request.response,
    ...gradeMcqa(request.response, request.expected_answer),
    ...invalid,
    ...(Object.fromEntries(carried) as Record<string, unknown>),
  };
}

/** Judge-failure body, shaped like NeMo Gym's judge failsafe row (spec §2.2). */
function judgeFailureBody(request: Record<string, unknown>): Record<string, unknown> {
  const echoed = Object.fromEntries(Object.entries(request).filter(([key]) => !CLIENT_STAMPED_KEYS.has(key)));
  return { ...echoed, reward: 0.0, _ng_failure_class: 'judge_failed', _ng_failure_judge_error: SIMULATED_JUDGE_ERROR };
}

/** Runs `action` after `ms` milliseconds, unless the response is closed first. */
/** The delay of each `/verify` in turn: `latencyMs`, or log-normal around it (`latencySpread`). */
export function latencyOf(options: Pick<ReferenceServerOptions, 'latencyMs' | 'latencySpread' | 'seed'>): () => number {
  const { latencyMs, latencySpread } = options;
  if (latencySpread === 0 || latencyMs === 0) return () => latencyMs;
  const uniform = mulberry32(options.seed ^ 0x5eed);
  // Box-Muller: a standard normal from two uniforms (1 - u keeps the logarithm finite).
  return () => latencyMs * Math.exp(latencySpread * Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform()));
}

function afterLatency(res: ServerResponse, ms: number, action: () => void): void {
  if (ms <= 0) return action();
  const timer = setTimeout(action, ms);
  res.once('close', () => clearTimeout(timer));
}

function carryOut(
  outcome: VerifyOutcome,
  request: Record<string, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
  invalid: InvalidJudgeFields | null,
  pretty: boolean,
): void {
  switch (outcome) {
    case 'hang':
      return; // never answered: the socket stays open until the client or `close()` ends it
    case 'reset':
      req.socket.resetAndDestroy();
      return;
    case 'error':
      return sendJsonText(res, 500, ERROR_BODY);
    case 'judge_failed':
      return sendJson(res, 200, judgeFailureBody(request), pretty);
    case 'success':
      return sendJson(res, 200, successBody(request, invalid), pretty);
  }
}

/** Answers 429 with `Retry-After` when the quota has no token for this request (the outcome PRNG is not drawn). */
function refusedByQuota(quota: RequestQuota, key: string, res: ServerResponse, stats: StatsRecorder, rpm: number): boolean {
  const decision = quota.take(performance.now(), key);
  if (decision.ok) {
    stats.admitted(key);
    return false;
  }
  stats.throttled(key);
  const body = JSON.stringify({ detail: `Rate limit reached: ${rpm} requests per minute` });
  res.writeHead(429, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'retry-after': retryAfterHeader(decision.retryAfterMs),
  });
  res.end(body);
  return true;
}

/**
 * The `POST /verify` handler: validates the body (422), draws an outcome from the seeded PRNG in
 * arrival order, waits `latencyMs`, then carries the outcome out.
 */
export function createVerifyHandler(
  options: ReferenceServerOptions,
  stats: StatsRecorder,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const random = mulberry32(options.seed);
  const delay = latencyOf(options);
  const invalidJudges = new InvalidJudges([
    ...parseInvalidJudgeRules(options.invalidJudge, true),
    ...parseInvalidJudgeRules(options.permanentInvalidJudge, false),
  ]);
  const quota = options.rpm > 0 ? new RequestQuota(options.rpm, options.rpmBurst) : null;
  return async (req, res) => {
    stats.request('verify');
    // In flight until the answer is handed to the OS ('finish'), or the socket dies ('close'):
    // counting until 'close' would overlap with the client's next request on another socket.
    const ended = stats.verifyStarted();
    let open = true;
    const end = () => {
      if (open) ended();
      open = false;
    };
    res.once('finish', end);
    res.once('close', end);
    const raw = await readBody(req);
    let request: unknown;
    try {
      request = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      return sendJson(res, 422, { detail: [jsonInvalid((error as Error).message)] });
    }
    const issues = verifyRequestIssues(request);
    if (issues.length > 0) return sendJson(res, 422, { detail: issues });
    const valid = request as Record<string, unknown>;
    const key = `${JSON.stringify(valid._ng_task_index)}:${JSON.stringify(valid._ng_rollout_index)}`;
    if (quota && refusedByQuota(quota, key, res, stats, options.rpm)) return;
    stats.verifyKey(key);
    const outcome = drawOutcome(random(), options);
    stats.outcome(outcome);
    // Only a grading counts toward a row's flagged gradings (a simulated outage is no grading).
    const invalid = outcome === 'success' ? invalidJudges.next(key) : null;
    afterLatency(res, delay(), () => {
      if (outcome === 'judge_failed') stats.judgeFailed(key);
      carryOut(outcome, valid, req, res, invalid, options.pretty);
    });
  };
}
