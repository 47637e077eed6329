/**
 * The environment of the `temporal server start-dev` that reverify spawns: the caller's, with a
 * soft memory limit for the server's Go runtime (GOMEMLIMIT) unless the caller sets one.
 */

/**
 * Go's soft memory limit for the dev server. Go collects garbage when its heap has doubled since
 * the last collection (GOGC=100), so the server's RSS followed its live heap times two and grew with
 * the run: 166/202/246 MiB at 10^4/10^5/10^6 rows, and ~300 MiB at 10^5 once batch results grew
 * (bench/README.md, scale.ts). Near this limit Go collects more often instead, so the server stays
 * under the 300 MiB every process of a run is held to. It is soft: a server whose live data needs
 * more still gets it (Go caps the extra collection work at half its CPU) instead of failing.
 */
export const DEV_SERVER_GOMEMLIMIT = '160MiB';

/**
 * `env` with `GOMEMLIMIT` set to `DEV_SERVER_GOMEMLIMIT` when it has none (or an empty one). A
 * user's own value wins, `GOMEMLIMIT=off` included (Go's "no limit").
 */
export function devServerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  if (env.GOMEMLIMIT !== undefined && env.GOMEMLIMIT !== '') return env;
  return { ...env, GOMEMLIMIT: DEV_SERVER_GOMEMLIMIT };
}
