/** What a failed request's error says: a bug of ours, or a transport problem worth retrying, in one line. */
import { ConfigError } from '../contract/errors.js';
import { truncateOneLine } from './excerpt.js';

/** Errors that mean a bug or a closed client, not a server problem: never turned into a retry. */
export function isUsageError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    err instanceof ConfigError ||
    code === 'UND_ERR_INVALID_ARG' ||
    code === 'UND_ERR_INVALID_RETURN_VALUE' ||
    code === 'UND_ERR_DESTROYED' ||
    code === 'UND_ERR_CLOSED' ||
    code === 'UND_ERR_NOT_SUPPORTED'
  );
}

/** A short description of a transport error, e.g. `connect ECONNREFUSED` or `other side closed (UND_ERR_SOCKET)`. */
export function describeTransportError(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describeTransportError(err.errors[0]);
  if (err === null || typeof err !== 'object') return truncateOneLine(String(err), 200);
  const e = err as { code?: unknown; syscall?: unknown; message?: unknown; hostname?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const syscall = typeof e.syscall === 'string' ? e.syscall : undefined;
  if (syscall !== undefined && code !== undefined) {
    const host = syscall === 'getaddrinfo' && typeof e.hostname === 'string' ? ` ${e.hostname}` : '';
    return `${syscall} ${code}${host}`;
  }
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : undefined;
  if (message !== undefined && code !== undefined && !message.includes(code)) {
    return truncateOneLine(`${message} (${code})`, 200);
  }
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- last resort for an error without message or code
  return truncateOneLine(message ?? code ?? String(err), 200);
}
