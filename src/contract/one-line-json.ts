/**
 * A JSON text as one JSONL line. A resources server may answer `/verify` with indented JSON (or a
 * trailing newline); its body is kept byte for byte in the output row, so line breaks in it would
 * split the row over several lines. JSON strings cannot hold a raw line break, so every `\n`/`\r`
 * of a valid JSON text is whitespace between tokens.
 */
import { BACKSLASH, isJsonWhitespace, QUOTE } from './json-chars.js';

/**
 * `text` (one valid JSON value) on one line: the whitespace around it trimmed and, when it spans
 * lines, every whitespace between its tokens removed (strings and numbers untouched). A text on one
 * line without surrounding whitespace is returned as it is.
 */
export function oneLineJson(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.includes('\n') && !trimmed.includes('\r')) return trimmed;
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < trimmed.length; i++) {
    const c = trimmed.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (isJsonWhitespace(c)) {
      out += trimmed.slice(from, i);
      from = i + 1;
    }
  }
  return out + trimmed.slice(from);
}
