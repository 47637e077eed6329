import { InputError } from './errors.js';

/**
 * The one line for a JSONL line that is not one JSON value: `file:line`, what the parser said and
 * what to do (`then`: the command to run after fixing it, when it is not the same command). A
 * UTF-8 byte order mark at the start of the file is named as such: editors add it unseen, and
 * NeMo Gym's reader refuses it too.
 */
export function malformedJsonLine(path: string, lineNo: number, text: string, err: unknown, then = ''): InputError {
  if (lineNo === 1 && text.startsWith('\uFEFF')) {
    return new InputError(
      `${path}:1: the file starts with a UTF-8 byte order mark (BOM), which is not JSON; save it as UTF-8 without a BOM${then}`,
    );
  }
  return new InputError(`${path}:${lineNo}: malformed JSON (${(err as Error).message}); fix or remove this line${then}`);
}

/** The one line for a JSONL line whose bytes are not UTF-8. */
export function notUtf8Line(path: string, lineNo: number): InputError {
  return new InputError(`${path}:${lineNo}: the line is not valid UTF-8; fix the file's encoding (JSON must be UTF-8)`);
}
