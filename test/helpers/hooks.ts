/** Resources whose lifetime vitest hooks manage: one per test, or one for the whole file. */
import { afterAll, afterEach, beforeAll } from 'vitest';

/** Wraps `start` so that whatever it starts during a test is closed after that test. */
export function closedAfterEach<A extends unknown[], T extends { close(): Promise<void> }>(
  start: (...args: A) => Promise<T>,
): (...args: A) => Promise<T> {
  const opened: T[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  return async (...args) => {
    const s = await start(...args);
    opened.push(s);
    return s;
  };
}

/** Opens a resource in `beforeAll` and closes it in `afterAll`; the getter returns it in between. */
export function openForFile<T>(open: () => Promise<T>, close: (value: T) => Promise<void>): () => T {
  let value: { current: T } | undefined;
  beforeAll(async () => {
    value = { current: await open() };
  });
  afterAll(async () => {
    if (value) await close(value.current);
  });
  return () => {
    if (!value) throw new Error('openForFile: used before its beforeAll ran');
    return value.current;
  };
}
