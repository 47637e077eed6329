/**
 * The embedded Temporal dev server (`temporal server start-dev` on a SQLite file): what the rest
 * of reverify imports of it. Inside, imports point one way: ensure, stop, status -> start ->
 * readiness, info -> health, lock, ports, server-process -> processes, paths, record-file,
 * log-file, workflow-ui-url -> defaults, types, sleep.
 *
 * It runs as a DETACHED daemon, shared by every `reverify` process that uses the same state
 * directory: the Web UI link printed at the end of a run keeps working after the CLI exits, a
 * second CLI in another terminal attaches to the same server, and a crashed CLI, restarted, finds
 * its workflow still there. `<state>/server.json` records the daemon; `<state>/server.lock`
 * (O_EXCL, stale when its pid is dead) keeps two CLIs starting at once from starting two servers
 * on one SQLite file.
 */
export { ensureDevServer, recordedDevServerAddress } from './ensure.js';
export { stopDevServer } from './stop.js';
export { devServerStatus } from './status.js';
export { devServerPaths } from './paths.js';
export { runDetailsUiUrl, workflowUiUrl } from './workflow-ui-url.js';
export type { DevServerRecord } from './types.js';
