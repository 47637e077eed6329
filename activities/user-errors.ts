import { ApplicationFailure } from '@temporalio/common';
import { ConfigError, InputChangedError } from '../src/contract/errors.js';
import { FailureType } from '../src/contract/failure-types.js';

/**
 * Runs an activity body, turning a `ConfigError` (bad input, bad config, existing output...) or an
 * `InputChangedError` (a file changed after the plan) into a non-retryable failure: retrying cannot
 * fix it, and the CLI shows its one line and exits 1.
 */
export async function failFastOnUserError<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(err.message, FailureType.Config);
    if (err instanceof InputChangedError) throw ApplicationFailure.nonRetryable(err.message, FailureType.InputChanged);
    throw err;
  }
}
