/**
 * Loans of `/verify` lanes (activities/lend-lanes.ts): when the window has nothing to launch, its
 * free slots are lent to the batches still running, so their last rows are not sent on their own
 * shares alone while the rest of the ceiling idles. One loan each time slots free up; a loan moves on (Temporal retries it) from a worker process whose batches have no row left
 * to hand out to the next. Those still out are cancelled without waiting once the batches have
 * ended or a segment falls due (a loan sends nothing of its own); before a continue-as-new, they
 * are cancelled and waited for.
 */
import { CancellationScope, condition } from '@temporalio/workflow';
import type { RunSpec } from '../src/contract/run-spec.js';
import { loan } from './activity-proxies.js';
import { loanOptions } from './batch-request.js';
import type { RunState } from './run-state.js';

export class Loans {
  /** Loans in flight (their slots), by a number of their own. */
  private readonly out = new Map<number, number>();
  private lent = 0;
  private scope: CancellationScope;

  /** Loans run in a scope of their own under `parent` (the window's: a failing run stops them too). */
  constructor(
    private readonly spec: RunSpec,
    private readonly st: RunState,
    private readonly parent: CancellationScope,
  ) {
    this.scope = new CancellationScope({ cancellable: true, parent });
  }

  /** Slots the loans hold. */
  slots(): number {
    return [...this.out.values()].reduce((a, b) => a + b, 0);
  }

  /** Lends `lanes` lanes to the latest round's batches. */
  lend(lanes: number): void {
    const key = ++this.lent;
    this.out.set(key, lanes);
    void this.scope
      .run(() => loan.lendLanes.executeWithOptions(loanOptions(this.spec, this.st, lanes), [{ round: this.st.round, lanes }]))
      // A loan sends nothing of its own: its failure (a lost worker) costs the run nothing.
      .catch(() => undefined)
      .finally(() => this.out.delete(key));
  }

  /** Cancels the loans still out. */
  end(): void {
    if (this.out.size === 0) return;
    this.scope.cancel();
    this.scope = new CancellationScope({ cancellable: true, parent: this.parent });
  }

  /** Cancels the loans still out and waits until they have ended, their lanes retired. */
  async ended(): Promise<void> {
    this.end();
    await condition(() => this.out.size === 0);
  }
}
