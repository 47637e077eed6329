import { describe, expect, it } from 'vitest';
import { DEV_SERVER_GOMEMLIMIT, devServerEnv } from '../../src/temporal/dev-server/server-env.js';

// The environment `temporal server start-dev` is spawned with (src/temporal/dev-server/start.ts).

describe('devServerEnv', () => {
  it('adds a soft Go memory limit to the caller environment, which it does not change', () => {
    const env = { PATH: '/usr/bin', HOME: '/home/u' };
    expect(devServerEnv(env)).toEqual({ PATH: '/usr/bin', HOME: '/home/u', GOMEMLIMIT: DEV_SERVER_GOMEMLIMIT });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/u' });
    expect(DEV_SERVER_GOMEMLIMIT).toMatch(/^\d+MiB$/);
  });

  it("keeps the user's own GOMEMLIMIT, `off` included; an empty one counts as unset", () => {
    expect(devServerEnv({ GOMEMLIMIT: '1GiB' }).GOMEMLIMIT).toBe('1GiB');
    expect(devServerEnv({ GOMEMLIMIT: 'off' }).GOMEMLIMIT).toBe('off');
    expect(devServerEnv({ GOMEMLIMIT: '' }).GOMEMLIMIT).toBe(DEV_SERVER_GOMEMLIMIT);
  });

  it('reads process.env by default', () => {
    expect(devServerEnv().PATH).toBe(process.env.PATH);
  });
});
