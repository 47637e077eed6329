/**
 * FastAPI-like request validation errors: a 422 answer with `{"detail": [ValidationIssue, ...]}`.
 */

/** One entry of a FastAPI 422 `detail` list. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** A request the server rejects with HTTP 422 and `{"detail": issues}`. */
export class RequestValidationError extends Error {
  constructor(readonly detail: ValidationIssue[]) {
    super(detail.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; '));
    this.name = 'RequestValidationError';
  }
}

/** True for a JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body is not valid JSON. */
export function jsonInvalid(reason: string): ValidationIssue {
  return { type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: reason } };
}

/** A value that must be an object is something else. */
export function notAnObject(loc: (string | number)[], input: unknown): ValidationIssue {
  return {
    type: 'model_attributes_type',
    loc,
    msg: 'Input should be a valid dictionary or object to extract fields from',
    input,
  };
}

/** A required field is absent. */
export function missingField(loc: (string | number)[], input?: unknown): ValidationIssue {
  return { type: 'missing', loc, msg: 'Field required', ...(input === undefined ? {} : { input }) };
}

/** A value that must be a list is something else. */
export function notAList(loc: (string | number)[]): ValidationIssue {
  return { type: 'list_type', loc, msg: 'Input should be a valid list' };
}

/**
 * Checks a parsed `/verify` body against the base verify request model: an object with
 * `responses_create_params` and `response` objects. Other fields are not checked.
 */
export function verifyRequestIssues(body: unknown): ValidationIssue[] {
  if (!isJsonObject(body)) return [notAnObject(['body'], body)];
  const issues: ValidationIssue[] = [];
  for (const field of ['responses_create_params', 'response']) {
    if (!(field in body)) issues.push(missingField(['body', field], body));
    else if (!isJsonObject(body[field])) issues.push(notAnObject(['body', field], body[field]));
  }
  return issues;
}
