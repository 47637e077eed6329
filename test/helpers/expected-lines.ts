/**
 * Lines `reverify run` prints, spelled out here as the spec words them (not built with
 * src/contract/messages.ts, so the tests check the exact text).
 */

/** What recovery mode prints after copying the successes of --rollouts into the output. */
export const seededLine = (n: number, f: { output: string }) => `Recovery mode: seeded ${n} successful rollout(s) into ${f.output}`;

/** The summary a `--resume` run prints. */
export const resumeSummary = (total: number, done: number, terminal: number, maxed: number, remaining: number) =>
  [
    'Resumed from cache. Found:',
    `- ${total} total rows to be re-verified`,
    `- ${done} rows already done (in main jsonl)`,
    `- ${terminal} sidecar-terminal (for example skipped) → not retried`,
    `- ${maxed} hit max_attempts → not retried`,
    `- ${remaining} rows that still need to be run`,
  ].join('\n');
