/**
 * The records the report's verdict join sorts: one per keyed row of the old files (`--rollouts`
 * and a recovery run's input sidecar) and of the main output. Sorted by key (task part, then
 * rollout part), then old before new, then file order, so each key's records come together, a
 * task's keys come together, and a key's last old verdict and first new row are at known places.
 * A part that is a non-negative integer below 10^15 (nearly every index) is held as that number,
 * any other as its part id (`rawPartId`): records stay small and most comparisons are of numbers.
 */
import type { RecordCodec } from '../io/external-sort.js';
import { readString, stringSize, writeString } from '../io/row-key-codec.js';

/** A row of the old files. */
export const OLD = 0;
/** A row of the main output. */
export const NEW = 1;

export interface VerdictRecord {
  /** The task part as a number ≥ 0 (then `taskText` is ''), else −1 and `taskText` is its part id. */
  taskNum: number;
  taskText: string;
  /** The rollout part, the same way. */
  rolloutNum: number;
  rolloutText: string;
  side: typeof OLD | typeof NEW;
  /** Order in the files read (old files in reading order; the main output by itself). */
  seq: number;
  /** The reward as a number (true/false as 1/0), NaN when absent or not a number. */
  reward: number;
  /** Index of the row's agent name in the join's table (new rows; 0 for old ones). */
  agent: number;
}

const SMALL_INTEGER = /^\d{1,15}$/;

/** A part id as a record holds it: [number, ''] for a small non-negative integer, else [−1, part]. */
export function heldPart(part: string): [number, string] {
  return SMALL_INTEGER.test(part) ? [Number(part), ''] : [-1, part];
}

/** The part id of a held part. */
export const partId = (num: number, text: string) => (num >= 0 ? String(num) : text);

/** side (1) + seq (8) + reward (8) + agent (4) + the two numbers (16), then the texts of the other parts. */
const FIXED_BYTES = 37;

export const verdictRecordCodec: RecordCodec<VerdictRecord> = {
  size: (r) => FIXED_BYTES + (r.taskNum < 0 ? stringSize(r.taskText) : 0) + (r.rolloutNum < 0 ? stringSize(r.rolloutText) : 0),
  write(r, buf, at) {
    buf[at] = r.side;
    buf.writeDoubleLE(r.seq, at + 1);
    buf.writeDoubleLE(r.reward, at + 9);
    buf.writeUInt32LE(r.agent, at + 17);
    buf.writeDoubleLE(r.taskNum, at + 21);
    buf.writeDoubleLE(r.rolloutNum, at + 29);
    let p = at + FIXED_BYTES;
    if (r.taskNum < 0) p = writeString(r.taskText, buf, p);
    if (r.rolloutNum < 0) writeString(r.rolloutText, buf, p);
  },
  read(buf, at) {
    const taskNum = buf.readDoubleLE(at + 21);
    const rolloutNum = buf.readDoubleLE(at + 29);
    let p = at + FIXED_BYTES;
    let taskText = '';
    let rolloutText = '';
    if (taskNum < 0) [taskText, p] = readString(buf, p);
    if (rolloutNum < 0) [rolloutText] = readString(buf, p);
    return {
      taskNum,
      taskText,
      rolloutNum,
      rolloutText,
      side: buf[at] === OLD ? OLD : NEW,
      seq: buf.readDoubleLE(at + 1),
      reward: buf.readDoubleLE(at + 9),
      agent: buf.readUInt32LE(at + 17),
    };
  },
};

/** Numbers first, in numeric order; then part ids, in string order. */
function compareParts(an: number, at: string, bn: number, bt: string): number {
  if (an >= 0 && bn >= 0) return an - bn;
  if (an >= 0 || bn >= 0) return an >= 0 ? -1 : 1;
  return at < bt ? -1 : at > bt ? 1 : 0;
}

export function compareVerdictRecords(a: VerdictRecord, b: VerdictRecord): number {
  return (
    compareParts(a.taskNum, a.taskText, b.taskNum, b.taskText) ||
    compareParts(a.rolloutNum, a.rolloutText, b.rolloutNum, b.rolloutText) ||
    a.side - b.side ||
    a.seq - b.seq
  );
}
