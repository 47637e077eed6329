import { once } from 'node:events';
import { type ReferenceServerOptions, referenceServerOptionsSchema } from './options.js';
import { startReferenceServer } from './server.js';

export { referenceServerOptionsSchema, type ReferenceServerOptions } from './options.js';

/**
 * `reverify reference-server`: starts the reference resources server, prints
 * `reference server listening on <url> (mode=<mode>)` and serves until SIGINT or SIGTERM, then
 * closes it and resolves. `opts` are the parsed CLI flags (validated by
 * `referenceServerOptionsSchema`; a ZodError is thrown for invalid values).
 */
export async function runReferenceServerCli(opts: Partial<ReferenceServerOptions>): Promise<void> {
  const options = referenceServerOptionsSchema.parse(opts);
  const server = await startReferenceServer(options);
  process.stdout.write(
    `reference server listening on ${server.url} (mode=${options.mode}${options.rpm > 0 ? `, ${options.rpm} requests per minute` : ''})\n`,
  );
  const stop = new AbortController();
  await Promise.race([once(process, 'SIGINT', { signal: stop.signal }), once(process, 'SIGTERM', { signal: stop.signal })]);
  stop.abort(); // removes the listener of the other signal
  await server.close();
}
