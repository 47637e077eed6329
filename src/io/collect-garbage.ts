/**
 * A full garbage collection now, where a phase has just dropped many objects that had reached V8's
 * old generation, which V8 alone would let grow by 100+ MB of such garbage before collecting: a
 * big external sort after writing a run once its heap has grown (external-sort.ts), the history
 * file between the runs of a continue-as-new chain (src/temporal/run-history.ts). The collector is
 * V8's `gc`, taken once from a fresh context made while the `--expose-gc` flag is set; the flag is
 * unset again at once, so no other context gets it.
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
