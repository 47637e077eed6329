/**
 * NeMo Gym 0.7.0 materialized task rows (`{"task_id": {...}, "task_input": {...}, "_ng_...": ...}`):
 * their task fields are lifted to the top of the `/verify` body, on raw text. The body is the row
 * without `task_id` and `task_input`, then the fields of `task_input.task_data` (the historical
 * single-agent container), then `task_input`'s other fields, each assigned with Python-dict
 * semantics (an existing key keeps its place and takes the new value, a new one is appended). A
 * field both inside and outside `task_data` must have the same value (Python `==`). A row whose
 * `task_input` is not an object is not a task row: it is sent as it is, like any other row.
 */
import { scanObject, setFieldsScanned, spansOf, type ObjectScan, type Span } from './json-spans.js';
import { TASK_DATA_KEY, TASK_ID_KEY, TASK_INPUT_KEY } from './keys.js';
import { conflictingTaskField, taskDataNotObject } from './messages.js';
import { pyJsonEqual } from './py-json-equal.js';

const isObjectText = (text: string, span: Span) => text.charCodeAt(span.start) === 0x7b; // '{'

/** The members of the JSON object at `span` of `text`: key -> raw value (first place, last value). */
function membersOf(text: string, span: Span): Map<string, string> {
  const inner = text.slice(span.start, span.end);
  const out = new Map<string, string>();
  for (const [k, s] of spansOf(scanObject(inner))) out.set(k, inner.slice(s.start, s.end));
  return out;
}

/** The task fields of a row in the order they are assigned, or a problem, or null when it is not a task row. */
function liftedFields(text: string, spans: Map<string, Span>): Array<[string, string]> | { problem: string } | null {
  const input = spans.get(TASK_INPUT_KEY);
  if (input === undefined || !isObjectText(text, input)) return null;
  const fields = membersOf(text, input);
  const dataRaw = fields.get(TASK_DATA_KEY);
  fields.delete(TASK_DATA_KEY);
  let data = new Map<string, string>();
  if (dataRaw !== undefined) {
    if (dataRaw.charCodeAt(0) !== 0x7b) return { problem: taskDataNotObject() };
    data = membersOf(dataRaw, { start: 0, end: dataRaw.length });
  }
  for (const [k, v] of fields) {
    const inside = data.get(k);
    if (inside !== undefined && !pyJsonEqual(v, inside)) return { problem: conflictingTaskField(k) };
  }
  // A key in both keeps task_data's place and takes the value outside it (equal by the check above).
  const lifted = new Map(data);
  for (const [k, v] of fields) lifted.set(k, v);
  return [...lifted];
}

/**
 * Why a materialized inputs row cannot become a `/verify` body, as one line (NeMo Gym 0.7.0's
 * words), or null: `task_input.task_data` is not an object, or a field inside and outside it differs.
 * `text` is the row's line, already known to be one JSON object.
 */
export function taskInputProblem(text: string): string | null {
  const lifted = liftedFields(text, spansOf(scanObject(text)));
  return lifted !== null && 'problem' in lifted ? lifted.problem : null;
}

/**
 * The `/verify` body's row for a materialized inputs row (without `response`): a task row's fields
 * lifted as the module says, or the row itself (the same string) when it has no object `task_input`.
 * `scan` is the row's scan, when the caller has it. Throws on a row `taskInputProblem` refuses.
 */
export function taskRowOf(text: string, scan: ObjectScan = scanObject(text)): string {
  const lifted = liftedFields(text, spansOf(scan));
  if (lifted === null) return text;
  if ('problem' in lifted) throw new Error(lifted.problem);
  return setFieldsScanned(text, scan, lifted, [TASK_ID_KEY, TASK_INPUT_KEY]);
}
