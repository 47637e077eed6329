import type { FileHandle } from 'node:fs/promises';

/** Characters gathered before a write. */
const WRITE_CHARS = 1 << 20;

/**
 * Lines written to a file a megabyte at a time: a write of its own per line made files of 10^7
 * lines (a run's unstarted rollouts) wait on 10^7 writes through the thread pool. `flush()` writes
 * what is left; call it before closing the file.
 */
export class BufferedLines {
  private pending = '';

  constructor(private readonly out: FileHandle) {}

  /** Adds `text` (one or more whole lines, with their `\n`); a promise only when a write is due. */
  add(text: string): Promise<void> | undefined {
    this.pending += text;
    return this.pending.length >= WRITE_CHARS ? this.flush() : undefined;
  }

  async flush(): Promise<void> {
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    await this.out.write(text);
  }
}
