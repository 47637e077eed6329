/**
 * The batches' pooled lanes (activities/verify-batch/lane-pool.ts, `runPooledLanes` in lanes.ts):
 * a lane sends any joined batch's rows, never more rows run at once than the joined batches'
 * lanes, a leaving batch waits until as many lanes have retired, and groups never share lanes.
 */
import { describe, expect, it } from 'vitest';
import { LanePool, type PooledBatch, type RowRun } from '../../activities/verify-batch/lane-pool.js';
import { runPooledLanes } from '../../activities/verify-batch/lanes.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Deterministic delays (a small LCG), so a failure replays. */
function delays(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % 6;
  };
}

/** Counts the rows running at once in a group, and each row's runs. */
class Meter {
  running = 0;
  peak = 0;
  readonly runs = new Map<string, number>();
  /** Checked at every row start: the most rows that may run now. */
  constructor(private readonly allowed: () => number) {}

  row(id: string, ms: number): RowRun {
    return async () => {
      this.running++;
      this.peak = Math.max(this.peak, this.running);
      expect(this.running).toBeLessThanOrEqual(this.allowed());
      this.runs.set(id, (this.runs.get(id) ?? 0) + 1);
      await sleep(ms);
      this.running--;
    };
  }
}

/** A batch of `rows` rows for the pool, each run through `meter`. */
function batch(name: string, rows: number, meter: Meter, delay: () => number): PooledBatch & { answered: Promise<void> } {
  let next = 0;
  let done = 0;
  let answered!: () => void;
  const all = new Promise<void>((r) => (answered = r));
  return {
    answered: all,
    left: () => rows - next,
    claim: () => {
      if (next >= rows) return null;
      const run = meter.row(`${name}:${next++}`, delay());
      return async () => {
        await run();
        if (++done === rows) answered();
      };
    },
  };
}

describe('LanePool', () => {
  it('runs every row of every batch once, never more at once than the joined batches have lanes', async () => {
    const pool = new LanePool();
    let joined = 0;
    const meter = new Meter(() => joined);
    const delay = delays(7);
    const sizes = [40, 3, 25, 60, 1];
    const lanes = [4, 2, 3, 5, 1];
    await Promise.all(
      sizes.map(async (rows, i) => {
        await sleep(i * 3);
        const b = batch(`b${i}`, rows, meter, delay);
        joined += lanes[i];
        const member = pool.join('run 1', b, lanes[i]);
        await b.answered;
        await member.leave();
        joined -= lanes[i];
        // Once it has left, the pool runs no more lanes than the batches still in it have.
        expect(pool.lanesOf('run 1')).toBeLessThanOrEqual(joined);
      }),
    );
    expect([...meter.runs.values()].every((n) => n === 1)).toBe(true);
    expect(meter.runs.size).toBe(sizes.reduce((a, b) => a + b, 0));
    expect(pool.lanesOf('run 1')).toBe(0);
  });

  it("a batch whose rows are answered lends its lanes to the others' rows until it leaves", async () => {
    const pool = new LanePool();
    let allowed = 5;
    const meter = new Meter(() => allowed);
    const slow = batch('slow', 400, meter, () => 2);
    const quick = batch('quick', 2, meter, () => 1);
    // Quick's rows are taken first (alone in the pool; the most rows left go first once both are in).
    const quickMember = pool.join('run', quick, 4);
    const slowMember = pool.join('run', slow, 1);
    await quick.answered;
    // Quick's four lanes now send slow's rows: five at once.
    for (let i = 0; i < 200 && meter.running < 5; i++) await sleep(1);
    expect(meter.running).toBe(5);
    await quickMember.leave();
    // From now on, one lane: checked at every row's start.
    allowed = 1;
    expect(meter.running).toBeLessThanOrEqual(1);
    await slow.answered;
    await slowMember.leave();
    expect(meter.peak).toBe(5);
  });

  it("lent lanes send the group's rows until none is left to hand out, then retire; a loan to a group without rows ends at once", async () => {
    const pool = new LanePool();
    let allowed = 2;
    const meter = new Meter(() => allowed);
    const last = batch('last', 300, meter, () => 2);
    const member = pool.join('run', last, 2);
    for (let i = 0; i < 100 && meter.running < 2; i++) await sleep(1);
    // A share lent: five lanes on the last batch's rows.
    allowed = 5;
    const stop = new AbortController();
    const loan = pool.lend('run', 3, stop.signal);
    for (let i = 0; i < 200 && meter.running < 5; i++) await sleep(1);
    expect(meter.running).toBe(5);
    // The loan ends once the batch hands out no more rows (some may still be answered), its lanes retired.
    await loan;
    expect(last.left()).toBe(0);
    allowed = 2;
    expect(pool.lanesOf('run')).toBe(2);
    await last.answered;
    await member.leave();
    expect(meter.runs.size).toBe(300);
    expect([...meter.runs.values()].every((n) => n === 1)).toBe(true);
    // Nothing to send in this process (or another group): the loan ends without running a row.
    await pool.lend('run', 4, stop.signal);
    await pool.lend('another run', 4, stop.signal);
    expect(pool.lanesOf('run') + pool.lanesOf('another run')).toBe(0);
  });

  it('a loan made before its batch starts waits for it (up to its wait), then lends to it', async () => {
    const pool = new LanePool();
    const meter = new Meter(() => 3);
    const b = batch('b', 100, meter, () => 2);
    const loan = pool.lend('run', 2, new AbortController().signal, 5_000);
    await sleep(20);
    const member = pool.join('run', b, 1);
    for (let i = 0; i < 200 && meter.running < 3; i++) await sleep(1);
    expect(meter.running).toBe(3);
    await loan;
    await b.answered;
    await member.leave();
    expect(meter.runs.size).toBe(100);
  });

  it('two loans made before their batch starts both wait for it: a loan joining is not the batch they wait for', async () => {
    const pool = new LanePool();
    const meter = new Meter(() => 5);
    const b = batch('b', 200, meter, () => 2);
    const never = new AbortController().signal;
    const loans = [pool.lend('run', 2, never, 5_000), pool.lend('run', 2, never, 5_000)];
    await sleep(20);
    const member = pool.join('run', b, 1);
    for (let i = 0; i < 200 && meter.running < 5; i++) await sleep(1);
    expect(meter.running).toBe(5);
    await Promise.all(loans);
    await b.answered;
    await member.leave();
    expect(meter.runs.size).toBe(200);
  });

  it('a loan ends when it is stopped (the run is cancelled) while the batches still have rows', async () => {
    const pool = new LanePool();
    const meter = new Meter(() => 3);
    const b = batch('b', 200, meter, () => 2);
    const member = pool.join('run', b, 1);
    const stop = new AbortController();
    const loan = pool.lend('run', 2, stop.signal);
    await sleep(10);
    stop.abort();
    await loan;
    expect(b.left()).toBeGreaterThan(0);
    expect(pool.lanesOf('run')).toBe(1);
    await b.answered;
    await member.leave();
  });

  it("lanes take the oldest batch's rows first, so batches run out of rows one after the other, not together", async () => {
    const pool = new LanePool();
    const order: string[] = [];
    const meter = new Meter(() => 4);
    const tracked = (name: string, rows: number): PooledBatch & { answered: Promise<void> } => {
      const b = batch(name, rows, meter, () => 1);
      return { ...b, claim: () => (b.left() > 0 ? (order.push(name), b.claim()) : null) };
    };
    const older = tracked('older', 12);
    const younger = tracked('younger', 30);
    const members = [pool.join('run', older, 2), pool.join('run', younger, 2)];
    await Promise.all([older.answered, younger.answered]);
    await Promise.all(members.map((m) => m.leave()));
    // Every row of the older batch was handed out before any of the younger one's (the younger has more left throughout).
    expect(order.slice(0, 12)).toEqual(new Array<string>(12).fill('older'));
    expect(order.slice(12)).toEqual(new Array<string>(30).fill('younger'));
  });

  it("a re-judgment's rows (`first`) go before the older batches' rows left, re-judgments in join order", async () => {
    const pool = new LanePool();
    const order: string[] = [];
    const meter = new Meter(() => 6);
    const tracked = (name: string, rows: number, first = false): PooledBatch & { answered: Promise<void> } => {
      const b = batch(name, rows, meter, () => 1);
      return { ...b, first, claim: () => (b.left() > 0 ? (order.push(name), b.claim()) : null) };
    };
    const older = tracked('older', 40);
    const members = [pool.join('run', older, 2)];
    await sleep(5);
    const r1 = tracked('rejudge-1', 5, true);
    const r2 = tracked('rejudge-2', 3, true);
    const younger = tracked('younger', 10);
    members.push(pool.join('run', r1, 2), pool.join('run', younger, 1), pool.join('run', r2, 1));
    await Promise.all([older.answered, r1.answered, r2.answered, younger.answered]);
    await Promise.all(members.map((m) => m.leave()));
    // From the re-judgments' join on: theirs first (the first joined first), then the older's, then the younger's.
    const from = order.indexOf('rejudge-1');
    expect(order.indexOf('older')).toBe(0);
    expect(order.slice(from, from + 8)).toEqual([...new Array<string>(5).fill('rejudge-1'), ...new Array<string>(3).fill('rejudge-2')]);
    const rest = order.slice(from + 8);
    expect(rest.lastIndexOf('older')).toBeLessThan(rest.indexOf('younger'));
    expect(order.filter((n) => n === 'older')).toHaveLength(40);
  });

  it("the lanes' next rows, as many as the lanes, are read ahead across batches: the younger's before the older runs out", async () => {
    const pool = new LanePool();
    const meter = new Meter(() => 8);
    const asked: Array<{ name: string; rows: number; left: number; olderLeft: number }> = [];
    let older: ReturnType<typeof batch> | undefined;
    const reading = (name: string, rows: number) => {
      const b = batch(name, rows, meter, () => 1);
      return { ...b, readAhead: (n: number) => asked.push({ name, rows: n, left: b.left(), olderLeft: older?.left() ?? 0 }) };
    };
    older = reading('older', 6);
    const younger = reading('younger', 30);
    const members = [pool.join('run', older, 4), pool.join('run', younger, 4)];
    await Promise.all([older.answered, younger.answered]);
    await Promise.all(members.map((m) => m.leave()));
    // The younger batch was asked to read rows while the older still had rows to hand out.
    expect(asked.some((a) => a.name === 'younger' && a.olderLeft > 0)).toBe(true);
    // Never more than a batch has left, nor more than the lanes; each batch's rows are read ahead before the lanes take them.
    for (const a of asked) expect(a.rows).toBeLessThanOrEqual(Math.min(a.left, 8));
    expect(asked.filter((a) => a.name === 'older').length).toBeGreaterThan(0);
    // Once the older has no row left, the younger reads the lanes' whole share ahead.
    expect(asked).toContainEqual(expect.objectContaining({ name: 'younger', rows: 8, olderLeft: 0 }));
  });

  it('never lends lanes between groups (runs, rounds)', async () => {
    const pool = new LanePool();
    const a = new Meter(() => 2);
    const b = new Meter(() => 3);
    const ba = batch('a', 20, a, () => 2);
    const bb = batch('b', 5, b, () => 1);
    const ma = pool.join('run A', ba, 2);
    const mb = pool.join('run B', bb, 3);
    await bb.answered;
    await mb.leave();
    await ba.answered;
    await ma.leave();
    expect(a.peak).toBe(2);
    expect(pool.lanesOf('run A') + pool.lanesOf('run B')).toBe(0);
  });
});

describe('runPooledLanes', () => {
  it('sends each row once, records it, and ends when all are answered', async () => {
    const pool = new LanePool();
    const sent: number[] = [];
    const recorded: number[] = [];
    await runPooledLanes(
      {
        rows: 12,
        lanes: 3,
        going: () => true,
        prepare: async (k) => k,
        send: async (k) => {
          sent.push(k);
          await sleep(1);
          return () => recorded.push(k);
        },
        fail: (err) => {
          throw err;
        },
      },
      pool,
      'g',
    );
    expect([...sent].sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
    expect([...recorded].sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
    expect(pool.lanesOf('g')).toBe(0);
  });

  it('a failing row goes to fail; a batch that stops while none of its rows is in flight still ends', async () => {
    const pool = new LanePool();
    let going = true;
    const failures: string[] = [];
    // Another batch of the group keeps the lanes busy, so the stopped one has nothing in flight.
    const other = batch('other', 40, new Meter(() => 3), () => 3);
    const member = pool.join('g', other, 1);
    await runPooledLanes(
      {
        rows: 50,
        lanes: 2,
        going: () => going,
        prepare: async (k) => k,
        send: async (k) => {
          if (k === 1) throw new Error('row 1 failed');
          if (k === 3) going = false;
          await sleep(1);
          return undefined;
        },
        fail: (err) => {
          failures.push(err.message);
          going = false;
        },
      },
      pool,
      'g',
    );
    expect(failures).toEqual(['row 1 failed']);
    await other.answered;
    await member.leave();
    expect(pool.lanesOf('g')).toBe(0);
  });

  it('a row being prepared when the batch stops is not sent', async () => {
    const pool = new LanePool();
    let going = true;
    const sent: number[] = [];
    await runPooledLanes(
      {
        rows: 10,
        lanes: 1,
        going: () => going,
        prepare: async (k) => {
          if (k === 2) going = false; // e.g. the run is being cancelled while its window is read
          await sleep(1);
          return k;
        },
        send: async (k) => {
          sent.push(k);
          return undefined;
        },
        fail: (err) => {
          throw err;
        },
      },
      pool,
      'g',
    );
    expect(sent).toEqual([0, 1]);
  });
});
