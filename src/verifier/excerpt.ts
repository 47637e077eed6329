/** Longest excerpt of a server reply that goes into a message or a failure row. */
export const EXCERPT_MAX_CHARS = 300;

/**
 * A short, single-line excerpt of a server reply body, for messages.
 *
 * Understands the two error shapes NeMo Gym resources servers produce (contract §2.2):
 * FastAPI 422 `{"detail":[{"loc":[...],"msg":...}]}` becomes `body.response: Field required; ...`,
 * and a 500 whose body is a JSON string (the exception repr) becomes that string.
 * Anything else is the raw text with whitespace collapsed. Never longer than `max` characters.
 */
export function bodyExcerpt(text: string, max: number = EXCERPT_MAX_CHARS): string {
  return truncateOneLine(summarize(text), max);
}

/** Collapse whitespace (including newlines) to single spaces and cut to `max` chars with '…'. */
export function truncateOneLine(text: string, max: number = EXCERPT_MAX_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  return `${flat.slice(0, Math.max(0, max - 1))}…`;
}

function summarize(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '(empty body)';
  const first = trimmed[0];
  if (first !== '{' && first !== '"') return trimmed;
  // Only parse bodies that are plausibly small error documents; a huge echo is cut instead.
  if (trimmed.length > 1_000_000) return trimmed.slice(0, EXCERPT_MAX_CHARS * 4);
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return trimmed;
  }
  if (typeof parsed === 'string') return parsed;
  if (parsed !== null && typeof parsed === 'object' && 'detail' in parsed) {
    const detail = parsed.detail;
    if (typeof detail === 'string') return detail;
    if (Array.isArray(detail)) {
      const parts = detail.map((d) => {
        if (d === null || typeof d !== 'object') return String(d);
        const { loc, msg } = d as { loc?: unknown; msg?: unknown };
        const where = Array.isArray(loc) ? loc.map(String).join('.') : '';
        const what = typeof msg === 'string' ? msg : JSON.stringify(d);
        return where ? `${where}: ${what}` : what;
      });
      if (parts.length > 0) return parts.join('; ');
    }
  }
  return trimmed;
}
