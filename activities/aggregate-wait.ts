import type { PostAggregateMetrics } from '../src/aggregation/aggregate-metrics-file.js';
import type { AggregateWait } from '../src/contract/aggregate-wait.js';

/**
 * `post` that tells `beat` what it waits for (src/contract/aggregate-wait.ts) as its first request
 * starts: the server, when, and the deadline. `current()` is the wait to heartbeat from then on.
 */
export function announcedPost(
  post: PostAggregateMetrics,
  servers: Readonly<Record<string, string>>,
  timeoutMs: number,
  beat: (w: AggregateWait) => void,
): { post: PostAggregateMetrics; current: () => AggregateWait | undefined } {
  let wait: AggregateWait | undefined;
  return {
    post: (server, bodyPath, replyPath, signal) => {
      if (wait === undefined) beat((wait = { server, url: servers[server], since: Date.now(), timeoutMs }));
      return post(server, bodyPath, replyPath, signal);
    },
    current: () => wait,
  };
}
