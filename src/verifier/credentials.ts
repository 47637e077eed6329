/**
 * HTTP Basic credentials of resources servers (RFC 7617). A URL's userinfo
 * (`http://user:password@host:port`, percent-encoded per RFC 3986) is taken out of the URL before the
 * URL goes anywhere else (the run spec, hence the workflow history, and every message) and kept in
 * this process for its own worker. Workers in other processes read them from `REVERIFY_SERVER_AUTH`:
 * the same URLs, separated by spaces or commas. Every request to a server's origin then carries
 * `Authorization: Basic base64(user:password)`.
 */
import { ConfigError } from '../contract/errors.js';
import { redactUserinfo } from '../contract/secrets.js';

/** The environment variable of worker processes that holds credentials. */
export const SERVER_AUTH_ENV = 'REVERIFY_SERVER_AUTH';

const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;

/**
 * `url` without its userinfo, and the `Authorization` value that userinfo gives (`null` without
 * one). `where` names the URL's origin for the one-line error on a malformed %-escape.
 */
export function splitCredentials(url: string, where: string): { url: string; authorization: string | null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url: url.replace(USERINFO, '$1'), authorization: null }; // not a URL: reported where URLs are checked
  }
  if (parsed.username === '' && parsed.password === '') return { url, authorization: null };
  let user: string;
  let password: string;
  try {
    user = decodeURIComponent(parsed.username);
    password = decodeURIComponent(parsed.password);
  } catch {
    throw new ConfigError(`${where}: the user or password in '${redactUserinfo(url)}' has a malformed %-escape: write '%' as %25`);
  }
  return { url: url.replace(USERINFO, '$1'), authorization: `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}` };
}

/** Credentials given to this process (`--server`, a config), by origin. */
const given = new Map<string, string>();

/** Keeps the credentials of `url` (without userinfo) for requests from this process. */
export function rememberCredentials(url: string, authorization: string): void {
  given.set(new URL(url).origin, authorization);
}

/**
 * Parses the value of `REVERIFY_SERVER_AUTH` into `Authorization` values by origin. A URL without
 * userinfo, or not a URL, is a `ConfigError` (shown without the userinfo).
 */
export function parseServerAuth(text: string): Map<string, string> {
  const byOrigin = new Map<string, string>();
  for (const item of text.split(/[\s,]+/).filter((s) => s !== '')) {
    const { url, authorization } = splitCredentials(item, SERVER_AUTH_ENV);
    let origin: string | null = null;
    try {
      origin = new URL(url).origin;
    } catch {
      origin = null;
    }
    if (authorization === null || origin === null || origin === 'null') {
      throw new ConfigError(
        `${SERVER_AUTH_ENV}: '${redactUserinfo(item)}' is not a URL with credentials; expected http://user:password@host:port`,
      );
    }
    byOrigin.set(origin, authorization);
  }
  return byOrigin;
}

/**
 * The `REVERIFY_SERVER_AUTH` value that gives a worker in another process the credentials this
 * process has: those given to it (as URLs with userinfo) and those of its own environment. Only for
 * the environment of a process this one starts (`reverify run --workers`), never for a message.
 */
export function serverAuthForWorkers(env: NodeJS.ProcessEnv = process.env): string {
  const urls = [...given].map(([origin, authorization]) => {
    const pair = Buffer.from(authorization.slice('Basic '.length), 'base64').toString('utf8');
    const colon = pair.indexOf(':'); // RFC 7617: a user-id has no colon; the password may
    const userinfo = `${encodeURIComponent(pair.slice(0, colon))}:${encodeURIComponent(pair.slice(colon + 1))}`;
    return origin.replace('://', `://${userinfo}@`);
  });
  return [env[SERVER_AUTH_ENV] ?? '', ...urls].filter((s) => s !== '').join(' ');
}

let envText: string | undefined;
let fromEnv = new Map<string, string>();

/** The `Authorization` value for requests to `origin`, or undefined: given to this process, else from the environment. */
export function authorizationFor(origin: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const own = given.get(origin);
  if (own !== undefined) return own;
  const text = env[SERVER_AUTH_ENV] ?? '';
  if (text !== envText) {
    fromEnv = parseServerAuth(text);
    envText = text;
  }
  return fromEnv.get(origin);
}
