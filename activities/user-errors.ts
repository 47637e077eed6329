import { ApplicationFailure } from '@temporalio/common';
import { ConfigError } from '../src/contract/errors.js';

/** Failure type of errors the user must fix; never retried. */
export const CONFIG_ERROR_TYPE = 'ConfigError';

/**
 * Runs an activity body, turning a `ConfigError` (bad input, bad config, existing output...) into a
 * non-retryable failure: retrying cannot fix it, and the CLI shows its one line and exits 1.
 */
export async function failFastOnUserError<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(err.message, CONFIG_ERROR_TYPE);
    throw err;
  }
}
