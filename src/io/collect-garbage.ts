/**
 * A full garbage collection now. The external sort calls it after writing a run once its heap has
 * grown (external-sort.ts): the run's records, promoted to V8's old generation while they waited,
 * are garbage from then on, and V8 alone would let the old generation grow by 100+ MB of them
 * before collecting. The collector is V8's `gc`, taken once from a fresh context made while the
 * `--expose-gc` flag is set; the flag is unset again at once, so no other context gets it.
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
