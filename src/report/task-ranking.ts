/** The tasks with flips the report lists: most flips first, the first `max` kept in bounded memory. */

export interface FlipCounts {
  up: number;
  down: number;
  changed: number;
}

export interface TaskFlips extends FlipCounts {
  task: string;
  agent: string;
  rows: number;
}

export const total = (f: FlipCounts) => f.up + f.down + f.changed;
const INTEGER = /^-?\d+$/;

/** Most flips first, then by task (numerically where both are integers), then by agent. */
function compareTaskFlips(x: TaskFlips, y: TaskFlips): number {
  const byFlips = total(y) - total(x);
  if (byFlips !== 0) return byFlips;
  if (x.task !== y.task) {
    if (INTEGER.test(x.task) && INTEGER.test(y.task)) {
      const d = Number(x.task) - Number(y.task);
      if (d !== 0) return d;
    }
    return x.task < y.task ? -1 : 1;
  }
  return x.agent < y.agent ? -1 : x.agent > y.agent ? 1 : 0;
}

export /** The first `max` tasks by `compareTaskFlips` of those offered, in bounded memory (at most 2·max held). */
class TaskRanking {
  private held: TaskFlips[] = [];
  offered = 0;

  constructor(private readonly max: number) {}

  offer(t: TaskFlips): void {
    this.offered++;
    this.held.push(t);
    if (this.held.length >= 2 * this.max) this.held = this.held.sort(compareTaskFlips).slice(0, this.max);
  }

  top(): TaskFlips[] {
    return this.held.sort(compareTaskFlips).slice(0, this.max);
  }
}
