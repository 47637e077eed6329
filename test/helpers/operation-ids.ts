/** Settled re-judgments carry an operation id that names their Temporal run (src/contract/rejudgment.ts). */

/** A line without its `_ng_operation_id` member (compact, as reverify appends it last). */
export function withoutOperationId(line: string): string {
  return line.replace(/,"_ng_operation_id":"[^"]*"/, '');
}

/** The operation id of a line, or undefined. */
export function operationIdOf(line: string): string | undefined {
  return (JSON.parse(line) as { _ng_operation_id?: string })._ng_operation_id;
}
