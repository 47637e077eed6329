/**
 * Choosing the gRPC and Web UI ports: the one requested (option or env), else a preferred one that
 * is free, else one the OS picks.
 */
import { createServer } from 'node:net';
import { ConfigError } from '../../contract/errors.js';
import { HOST } from './defaults.js';

export async function choosePort(
  requested: number | undefined,
  preferred: Array<number | undefined>,
  envName: string,
  taken: number[],
): Promise<number> {
  if (requested !== undefined && requested !== 0) {
    if (taken.includes(requested) || !(await isPortFree(requested))) {
      throw new ConfigError(
        `port ${requested} requested for the Temporal dev server is in use: choose another (option or ${envName}), or leave it unset to pick a free one`,
      );
    }
    return requested;
  }
  if (requested === undefined) {
    for (const p of preferred) {
      if (p !== undefined && !taken.includes(p) && (await isPortFree(p))) return p;
    }
  }
  for (;;) {
    const p = await freePort();
    if (!taken.includes(p)) return p;
  }
}

export function envPort(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new ConfigError(`${name}=${raw} is not a port number: use an integer from 1 to 65535 (0: any free port), or unset it`);
  }
  return n;
}

/** Whether `port` can be listened on now (on the dev server's host). */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolvePromise(false));
    srv.listen({ port, host: HOST, exclusive: true }, () => srv.close(() => resolvePromise(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port: 0, host: HOST, exclusive: true }, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolvePromise(port));
    });
  });
}
