/**
 * A full garbage collection now. The external sort calls it after each run it writes to disk (see
 * external-sort.ts): the run's records, promoted to V8's old generation while they waited, are
 * garbage from then on, and V8 alone would let the old generation grow by 100+ MB of them before
 * collecting. The collector is taken once through V8's `--expose-gc` flag, set only for the moment
 * a fresh context is made (the pattern of Node's own documentation of `v8.setFlagsFromString`).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null = null;

export function collectGarbage(): void {
  if (gc === null) {
    setFlagsFromString('--expose-gc');
    try {
      gc = runInNewContext('gc') as () => void;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  gc();
}
