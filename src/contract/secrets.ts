/**
 * The masking rules, in one place: what counts as a secret and how it is hidden in everything that
 * leaves the process (messages on the terminal, errors thrown by activities, hence the workflow
 * history and `<stem>_history.json`, and the config exported to MLflow). A secret is:
 * - the userinfo of a URL (`http://user:password@host`), anywhere in a text: it becomes `***`;
 * - the userinfo of a config's `host` (`host: user:password@host`, src/config/gym-config.ts);
 * - every value under a key that looks secret (`*key*`, `*token*`, `*secret*`, `*password*`,
 *   `*authorization*`, `*header*`, any case, at any depth; everything below such a key): it becomes
 *   `****`, NeMo Gym's mask, the key staying (`recursively_hide_secrets`, widened).
 */

/** What the userinfo of a URL becomes in a message or an exported value. */
export const MASK = '***';
/** What NeMo Gym writes for a masked config value. */
export const MASKED_VALUE = '****';

/** A URL's scheme and userinfo, anywhere in a text (the authority ends at `/`, `?`, `#` or a space). */
const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;
/** The same at the start of a text that is one URL, whose userinfo may hold spaces (`new URL` encodes them). */
const LEADING_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;
/** A key whose value is a secret: NeMo Gym's `token`/`key`/`header`, plus secrets, passwords and `Authorization`. */
const SECRET_KEY = /key|token|secret|password|authorization|header/i;

/** `text` with the userinfo of every URL in it replaced by `***` (`http://***@host:port`). */
export function redactUserinfo(text: string): string {
  return text.replace(LEADING_USERINFO, `$1${MASK}@`).replace(URL_USERINFO, `$1${MASK}@`);
}

/** Whether the value of `key` is a secret (then all of it is masked, at any depth). */
export function looksSecret(key: string): boolean {
  return SECRET_KEY.test(key);
}

/**
 * An error as it may leave the process (thrown out of an activity, printed): its message, stack and
 * causes without URL userinfo. Changed in place (its class and fields stay, for retry rules); returned.
 */
export function redactError<T>(err: T): T {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    e.message = redactUserinfo(e.message);
    if (e.stack !== undefined) e.stack = redactUserinfo(e.stack);
  }
  return err;
}

/** A copy of a config with every secret masked (see the module comment); keys and other values unchanged. */
export function hideSecrets(config: Record<string, unknown>): Record<string, unknown> {
  return maskValue(config, '', false) as Record<string, unknown>;
}

function maskValue(value: unknown, key: string, secret: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => maskValue(v, key, secret));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskValue(v, k, secret || looksSecret(k))]));
  if (secret) return MASKED_VALUE;
  return typeof value === 'string' ? maskText(key, value) : value;
}

/** A string leaf: URL userinfo masked; a `host`'s `user:password@` too (NeMo Gym builds its URL from it). */
function maskText(key: string, text: string): string {
  const at = key.toLowerCase() === 'host' && !text.includes('://') ? text.lastIndexOf('@') : -1;
  return at < 0 ? redactUserinfo(text) : `${MASK}${text.slice(at)}`;
}
