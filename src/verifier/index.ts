export {
  VerifierClient,
  classifyVerifyReply,
  describeTransportError,
  type AggregateMetricsReply,
  type ReverifyMode,
  type VerifierClientOptions,
  type VerifyReply,
} from './client.js';
export { AggregateMetricsError, VerifierUnavailableError } from './errors.js';
export { bodyExcerpt, EXCERPT_MAX_CHARS, truncateOneLine } from './excerpt.js';
export { parseRetryAfterMs } from './retry-after.js';
export { backoffDelayMs, DEFAULT_RETRY_AFTER_CAP_MS, DEFAULT_VERIFY_RETRY, type BackoffOptions } from './retry-policy.js';
export { verifyWithRetries, type VerifyRetryInfo, type VerifyRetryOptions } from './verify-with-retries.js';
