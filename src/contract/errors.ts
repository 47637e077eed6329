/**
 * Errors a user can fix. The CLI prints `Error: <message>` and exits with status 1.
 * Activities rethrow them as non-retryable ApplicationFailures of type `ConfigError`, so the
 * workflow fails at once and the CLI shows the same single line.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Bad input data: the message starts with `file:line: `. Also exit status 1. */
export class InputError extends ConfigError {}

/**
 * A file changed after the plan read it (`inputChanged`): the run stops before anything wrong is
 * written. Activities rethrow it as a non-retryable failure of type `InputChanged`; exit status 1.
 */
export class InputChangedError extends Error {
  override readonly name = 'InputChangedError';
}
