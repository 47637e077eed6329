/**
 * The attempt cap `NEMO_GYM_MAX_ROLLOUT_ATTEMPTS` (spec §1.0, §4.8), parsed like NeMo Gym does
 * with Python's `int()`.
 */
import { DEFAULT_MAX_ATTEMPTS, MAX_ATTEMPTS_ENV } from './keys.js';
import type { AttemptCap } from './coverage.js';
import { extendedCapNotice, maxAttemptsWarning, savedCapNotice } from './messages.js';
import { pyStrRepr } from './python-repr.js';

// Python's str.isspace() set, which int() strips (JS trim() differs: it strips U+FEFF, keeps U+001C-1F, U+0085).
const PY_SPACE = '[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PY_INT = new RegExp(`^${PY_SPACE}*([+-]?)(\\d(?:_?\\d)*)${PY_SPACE}*$`);

/**
 * Python `int(text)` for base 10: surrounding whitespace, a sign, leading zeros and single
 * underscores between digits are accepted (`" 5 "`, `"+5"`, `"007"`, `"1_000"`); anything else
 * (`"5.0"`, `"1e3"`, `""`) is not. Returns `null` when Python would raise `ValueError`.
 * Deviation: non-ASCII decimal digits, which Python also accepts, are rejected.
 */
export function parsePythonInt(text: string): number | null {
  const m = PY_INT.exec(text);
  if (!m) return null;
  const n = Number(m[2].replaceAll('_', ''));
  return m[1] === '-' ? -n || 0 : n;
}

/**
 * The attempt cap from the environment: unset or empty -> 3; a Python-int >= 1 -> that value;
 * anything else -> 3 plus the exact NeMo Gym warning text (for the caller to print).
 */
export function maxRolloutAttempts(env: Record<string, string | undefined>): { value: number; warning?: string } {
  const raw = env[MAX_ATTEMPTS_ENV];
  if (raw === undefined || raw === '') return { value: DEFAULT_MAX_ATTEMPTS };
  const n = parsePythonInt(raw);
  if (n === null) {
    const reason = `invalid literal for int() with base 10: ${pyStrRepr(raw)}`;
    return { value: DEFAULT_MAX_ATTEMPTS, warning: maxAttemptsWarning(raw, reason, DEFAULT_MAX_ATTEMPTS) };
  }
  if (n < 1) {
    return { value: DEFAULT_MAX_ATTEMPTS, warning: maxAttemptsWarning(raw, `must be >= 1, got ${n}`, DEFAULT_MAX_ATTEMPTS) };
  }
  return { value: n };
}

/** Where today's cap comes from, for the notice that a resumed run keeps its saved one. */
export type CapSource = '--max-attempts' | typeof MAX_ATTEMPTS_ENV | 'the default';

/**
 * The attempt cap a run uses (the seed's `attempt_cap` = saved `max_rollout_attempts` + recorded
 * `attempt_extension`): a resumed run with a saved cap keeps it, whatever today's flag or
 * environment says (one notice line when they differ); `--extend-attempts N` adds N to the saved
 * extension. A run without a saved cap saves today's. Pure: the caller reads the saved cap.
 */
export function resolveAttemptCap(
  today: { value: number; from: CapSource },
  saved: AttemptCap | null,
  opts: { resume: boolean; extend?: number; coverageFile: string },
): { cap: AttemptCap; notices: string[] } {
  const add = opts.extend ?? 0;
  const notices: string[] = [];
  let cap: AttemptCap;
  if (opts.resume && saved !== null) {
    const inForce = saved.max_rollout_attempts + saved.attempt_extension;
    if (inForce !== today.value) notices.push(savedCapNotice(inForce, today.value, today.from, opts.coverageFile));
    cap = { max_rollout_attempts: saved.max_rollout_attempts, attempt_extension: saved.attempt_extension + add };
  } else {
    cap = { max_rollout_attempts: today.value, attempt_extension: add };
  }
  if (add > 0) notices.push(extendedCapNotice(cap.max_rollout_attempts, cap.attempt_extension, add, opts.coverageFile));
  return { cap, notices };
}
