/** A promise that resolves after `ms` milliseconds: the wait of every polling loop here. */

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
