/** The loopback address the dev server listens on, its default ports, and the readiness timings. */

export const DEFAULT_DEV_SERVER_PORT = 7233;
export const DEFAULT_DEV_SERVER_UI_PORT = 8233;
export const DEFAULT_READY_TIMEOUT_MS = 30_000;

export const HOST = '127.0.0.1';
export const POLL_MS = 150;
