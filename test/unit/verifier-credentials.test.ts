import { describe, expect, it } from 'vitest';
import { parseServerFlag } from '../../src/config/routing.js';
import { ConfigError } from '../../src/contract/errors.js';
import { parseServerAuth, rememberCredentials, serverAuthForWorkers, splitCredentials } from '../../src/verifier/credentials.js';

const basic = (userPass: string) => `Basic ${Buffer.from(userPass, 'utf8').toString('base64')}`;

function messageOf(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('splitCredentials', () => {
  it('takes the userinfo out of the URL and percent-decodes it into a Basic header (RFC 3986, RFC 7617)', () => {
    expect(splitCredentials('http://us%40er:p%3Ass%20w%C3%B6rd@127.0.0.1:8000/base', 'x')).toEqual({
      url: 'http://127.0.0.1:8000/base',
      authorization: basic('us@er:p:ss wörd'),
    });
    expect(splitCredentials('https://token@judge.internal', 'x')).toEqual({
      url: 'https://judge.internal',
      authorization: basic('token:'),
    });
    expect(splitCredentials('http://127.0.0.1:8000', 'x')).toEqual({ url: 'http://127.0.0.1:8000', authorization: null });
  });

  it('a malformed %-escape is one line naming where, without the password', () => {
    const message = messageOf(() => splitCredentials('http://user:se%ZZcret@h:1', "resources server 'rs'"));
    expect(message).toBe("resources server 'rs': the user or password in 'http://***@h:1' has a malformed %-escape: write '%' as %25");
  });
});

describe('messages never show the password', () => {
  it.each([
    ['rs=http://user:secret@host:1/?q=1', /query or fragment/],
    ['rs=ftp://user:secret@host:1', /must start with http/],
  ])('--server %s', (flag, reason) => {
    const message = messageOf(() => parseServerFlag(flag));
    expect(message).toMatch(reason);
    expect(message).not.toContain('secret');
    expect(message).toContain('***@host:1');
  });

  it('--server keeps the userinfo for the CLI to take out', () => {
    expect(parseServerFlag('rs=http://u%40x:p%3A@0.0.0.0:8000/')).toEqual(['rs', 'http://u%40x:p%3A@127.0.0.1:8000']);
  });
});

describe('parseServerAuth (REVERIFY_SERVER_AUTH)', () => {
  it('URLs with credentials, separated by spaces or commas, by origin', () => {
    const map = parseServerAuth(' http://a:1@h1:8000/x,https://b:2@h2 ');
    expect([...map]).toEqual([
      ['http://h1:8000', basic('a:1')],
      ['https://h2', basic('b:2')],
    ]);
    expect(parseServerAuth('').size).toBe(0);
  });

  it('an entry without credentials is one line, without any password', () => {
    expect(messageOf(() => parseServerAuth('http://a:secret@h1:1 http://h2:2'))).toBe(
      "REVERIFY_SERVER_AUTH: 'http://h2:2' is not a URL with credentials; expected http://user:password@host:port",
    );
  });
});

describe('serverAuthForWorkers', () => {
  it('gives the workers a command starts the credentials it was given and those of its environment, each as they were', () => {
    rememberCredentials('http://127.0.0.1:8123', basic('us@er:p:ss wörd%42'));
    rememberCredentials('https://judge.internal', basic('token:'));
    const text = serverAuthForWorkers({ REVERIFY_SERVER_AUTH: 'http://env:pw@127.0.0.1:9000' });
    const parsed = parseServerAuth(text);
    expect(parsed.get('http://127.0.0.1:8123')).toBe(basic('us@er:p:ss wörd%42'));
    expect(parsed.get('https://judge.internal')).toBe(basic('token:'));
    expect(parsed.get('http://127.0.0.1:9000')).toBe(basic('env:pw'));
  });
});
