/**
 * Waiting for a starting server to answer, and the error (with the log's last lines) when it does
 * not.
 */
import { ConfigError } from '../../contract/errors.js';
import { HOST, POLL_MS } from './defaults.js';
import { probe } from './health.js';
import { logTail } from './log-file.js';
import { pidAlive } from './processes.js';
import { sleep } from './sleep.js';
import type { DevServerRecord } from './types.js';

/** Poll every 150 ms until the frontend answers DescribeNamespace, the process exits, or the deadline. */
export async function waitUntilReady(args: {
  record: DevServerRecord;
  namespace: string;
  deadline: number;
  logPath: string;
  exit?: { done: boolean; code: number | null; signal: NodeJS.Signals | null };
}): Promise<void> {
  const { record, namespace, deadline, logPath, exit } = args;
  const started = Date.now();
  for (;;) {
    const exited = exit?.done === true || !pidAlive(record.pid);
    if (exited) {
      // Our own child: give its 'exit' event a moment, for the exit code.
      for (let i = 0; i < 10 && exit !== undefined && !exit.done; i++) await sleep(50);
      const how =
        exit?.done === true ? (exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`) : 'exited';
      throw startFailure(`the Temporal dev server (pid ${record.pid}) ${how} before it was ready`, logPath);
    }
    const remaining = deadline - Date.now();
    const health = await probe(record.port, namespace, Math.max(500, Math.min(3_000, remaining)));
    if (health !== 'down') return;
    if (Date.now() >= deadline) {
      throw startFailure(
        `the Temporal dev server (pid ${record.pid}, ${HOST}:${record.port}) did not answer within ${Math.round((Date.now() - started) / 1000)} s; stop it with \`reverify server stop\` (or kill ${record.pid}) and try again`,
        logPath,
      );
    }
    await sleep(POLL_MS);
  }
}

function startFailure(summary: string, logPath: string): ConfigError {
  const tail = logTail(logPath, 12);
  const shown =
    tail.length > 0
      ? `; last lines of ${logPath}:\n${tail.map((l) => `  ${truncate(l, 400)}`).join('\n')}`
      : `; its log ${logPath} is empty`;
  return new ConfigError(`${summary}${shown}`);
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
