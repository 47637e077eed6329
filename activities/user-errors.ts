import { ApplicationFailure } from '@temporalio/common';
import { ConfigError, InputChangedError } from '../src/contract/errors.js';
import { FailureType } from '../src/contract/failure-types.js';
import { nonTransientFsError } from '../src/io/write-errors.js';

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

/**
 * The activity `fn` with a file-system error that retrying cannot fix (`nonTransientFsError`: a
 * name too long, a file in the way, a permission, a read-only file system) turned into a
 * non-retryable failure with its one line: the run stops, and the CLI prints it and exits 1,
 * instead of Temporal retrying it without end. A full disk stays retryable.
 */
export function failFastOnFsError<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      const line = nonTransientFsError(err);
      if (line !== null) throw ApplicationFailure.nonRetryable(line, FailureType.FileSystem);
      throw err;
    }
  };
}
