/** The masking rules (src/contract/secrets.ts): URL userinfo in texts, secret keys at any depth in configs. */
import { describe, expect, it } from 'vitest';
import { hideSecrets, looksSecret, redactError, redactUserinfo } from '../../src/contract/secrets.js';

describe('redactUserinfo', () => {
  it('masks the userinfo of every URL in a text, and nothing else', () => {
    expect(redactUserinfo('http://user:secret@host:1/x')).toBe('http://***@host:1/x');
    expect(redactUserinfo('http://host:1/x@y')).toBe('http://host:1/x@y');
    expect(redactUserinfo('http://u:p w@host:1')).toBe('http://***@host:1'); // a URL with a space in its password
    expect(
      redactUserinfo(
        'cannot reach http://u:S3CRETMARKER@127.0.0.1:5000: Request cannot be constructed from a URL that includes credentials: https://u:S3CRETMARKER@h/api',
      ),
    ).toBe('cannot reach http://***@127.0.0.1:5000: Request cannot be constructed from a URL that includes credentials: https://***@h/api');
    expect(redactUserinfo('mail judge@team at http://127.0.0.1:5000/x')).toBe('mail judge@team at http://127.0.0.1:5000/x');
  });
});

describe('redactError', () => {
  it('masks the message, stack and causes of an error in place, keeping its class', () => {
    class HttpError extends Error {}
    const err = new HttpError('GET http://u:S3CRETMARKER@h:1/x failed', { cause: new Error('at https://a:S3CRETMARKER@h') });
    expect(redactError(err)).toBe(err);
    expect(err).toBeInstanceOf(HttpError);
    expect(err.message).toBe('GET http://***@h:1/x failed');
    expect(err.stack).not.toContain('S3CRETMARKER');
    expect((err.cause as Error).message).toBe('at https://***@h');
    expect(redactError('not an error')).toBe('not an error');
  });
});

describe('hideSecrets', () => {
  it('recognises NeMo Gym secret keys plus secrets, passwords and Authorization, in any case', () => {
    for (const k of ['api_key', 'mlflow_tracking_token', 'headers', 'client_secret', 'db_password', 'Authorization', 'X-API-KEY'])
      expect(looksSecret(k), k).toBe(true);
    for (const k of ['host', 'port', 'model', 'mlflow_tracking_uri', 'temperature']) expect(looksSecret(k), k).toBe(false);
  });

  it('masks every value below a secret key at any depth, keeping the keys; URL and host userinfo are masked', () => {
    const config = {
      mlflow_tracking_uri: 'http://mlflowuser:S3CRETMARKER@127.0.0.1:5000',
      policy: {
        base_url: 'https://u:S3CRETMARKER@llm.internal/v1',
        headers: { Authorization: 'Bearer TOKENMARKER', 'X-Trace': ['a', { deep: 1 }] },
        extra: { Authorization: 'Bearer TOKENMARKER' },
        db_password: 'PWMARKER',
        temperature: 0.5,
        contact: 'judge@team',
      },
      rs: { resources_servers: { mcqa: { host: 'judge:S3CRETMARKER@127.0.0.1', port: 8000 } } },
      other: { host: 'plainhost' },
    };
    const masked = hideSecrets(config);
    expect(masked).toEqual({
      mlflow_tracking_uri: 'http://***@127.0.0.1:5000',
      policy: {
        base_url: 'https://***@llm.internal/v1',
        headers: { Authorization: '****', 'X-Trace': ['****', { deep: '****' }] },
        extra: { Authorization: '****' },
        db_password: '****',
        temperature: 0.5,
        contact: 'judge@team',
      },
      rs: { resources_servers: { mcqa: { host: '***@127.0.0.1', port: 8000 } } },
      other: { host: 'plainhost' },
    });
    expect(JSON.stringify(masked)).not.toMatch(/S3CRETMARKER|TOKENMARKER|PWMARKER/);
    expect(config.policy.headers.Authorization).toBe('Bearer TOKENMARKER'); // a copy: the input is unchanged
  });
});
