/**
 * Ctrl-C in `reverify run` / `demo`: the first one runs the registered graceful stop (the in-process
 * worker shuts down; running batches hand back what they finished) and says what happens next; a
 * second one exits at once. Without a registered stop, the first one exits at once too.
 */

/** A graceful stop: returns the line that says what happens next. */
type GracefulStop = () => Promise<string>;

let gracefulStop: GracefulStop | null = null;

/** Registers the stop that the first Ctrl-C runs; returns its removal. */
export function onInterrupt(stop: GracefulStop): () => void {
  gracefulStop = stop;
  return () => {
    if (gracefulStop === stop) gracefulStop = null;
  };
}

const DETACHED = 'Detached. The run is durable: run the same command again to continue it, or start `reverify worker` processes.';

/** Installs the SIGINT/SIGTERM handling of a command that follows a run. */
export function handleInterrupts(write: (line: string) => void = (l) => process.stderr.write(`\n${l}\n`)): void {
  let count = 0;
  const handler = () => {
    count++;
    const stop = gracefulStop;
    if (count > 1 || stop === null) {
      if (count > 1) write('Interrupted again: exiting now.');
      else write(DETACHED);
      process.exit(130);
    }
    write('Stopping the in-process worker: running batches hand back what they finished (Ctrl-C again exits at once)…');
    stop().then(
      (next) => {
        write(next);
        process.exit(130);
      },
      () => {
        write(DETACHED);
        process.exit(130);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
