/**
 * A process's gate in front of each verifier that throttles: while any request of this process
 * waits out a 429's `Retry-After` for a server, no new row is sent to that server; the rows told
 * to come back go first. A judge that hands out its quota's tokens in turn (as its `Retry-After`
 * says) then takes each of them on its next try: no row is refused twice in a row, and the
 * slots that wait are what the adaptive limit sees and gives back (workflows/adaptive-limit.ts).
 */
export class ThrottleGate {
  /** Server URL -> requests waiting out a Retry-After, and the promise that resolves when none are left. */
  private readonly held = new Map<string, { count: number; cleared: Promise<void>; clear: () => void }>();

  /** A request to `url` was refused and waits out its Retry-After: new rows to `url` wait too. */
  hold(url: string): void {
    const entry = this.held.get(url);
    if (entry) {
      entry.count++;
      return;
    }
    let clear!: () => void;
    const cleared = new Promise<void>((resolve) => (clear = resolve));
    this.held.set(url, { count: 1, cleared, clear });
  }

  /** The refused request is being sent again (or gave up). */
  release(url: string): void {
    const entry = this.held.get(url);
    if (!entry || --entry.count > 0) return;
    this.held.delete(url);
    entry.clear();
  }

  /** Resolves once no request to `url` waits out a Retry-After (at once if none does); rejects when `signal` aborts. */
  async clear(url: string, signal?: AbortSignal): Promise<void> {
    for (let entry = this.held.get(url); entry; entry = this.held.get(url)) await untilCleared(entry.cleared, signal);
  }
}

/** `cleared`, or a rejection with the signal's reason as soon as it aborts (its listener removed either way). */
function untilCleared(cleared: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return cleared;
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void cleared.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
