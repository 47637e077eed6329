import { RequestValidationError, isJsonObject, jsonInvalid, missingField, notAList, notAnObject } from './validation.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const TARGET_KEY = 'verify_responses';
/** Longer top-level strings cannot be the target key, so only this many bytes are kept. */
const MAX_KEY_BYTES = 32;

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function invalid(reason: string): RequestValidationError {
  return new RequestValidationError([jsonInvalid(reason)]);
}

/**
 * Streams an `/aggregate_metrics` body `{"verify_responses": [...], ...}` chunk by chunk and
 * hands each element of `verify_responses` to `onElement` as soon as it is complete, so a body of
 * hundreds of MB is never held as one string. Each element is parsed with `JSON.parse` on its
 * own; the structure around the elements is only scanned (brackets, strings, the target key),
 * which is enough to reject what FastAPI would reject for this model but not every malformed
 * body. Throws `RequestValidationError` (HTTP 422) for a body of the wrong shape.
 */
export class VerifyResponsesParser {
  private started = false;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Bytes of the top-level string being read (a key, or a string value). */
  private stringBytes: number[] | null = null;
  private lastTopLevelString = '';
  private expectingTarget = false;
  private inTarget = false;
  private foundTarget = false;
  private elementOpen = false;
  private elementStart = 0;
  private elementPieces: Buffer[] = [];
  private elementCount = 0;

  /** @param onElement receives each element (a JSON object) and its index in the list */
  constructor(private readonly onElement: (element: Record<string, unknown>, index: number) => void) {}

  /** Consumes the next chunk of the body. */
  push(chunk: Buffer): void {
    this.elementStart = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (this.inString) {
        this.readStringByte(byte);
        continue;
      }
      if (isWhitespace(byte)) continue;
      if (!this.started) {
        if (byte !== OPEN_BRACE) throw new RequestValidationError([notAnObject(['body'], undefined)]);
        this.started = true;
        this.depth = 1;
        continue;
      }
      if (this.depth === 0) throw invalid('Extra data after the JSON object');
      if (this.expectingTarget) {
        this.expectingTarget = false;
        if (byte !== OPEN_BRACKET) throw new RequestValidationError([notAList(['body', TARGET_KEY])]);
        this.inTarget = true;
        this.foundTarget = true;
        this.depth = 2;
        continue;
      }
      if (this.inTarget && this.depth === 2) {
        if (byte === COMMA || byte === CLOSE_BRACKET) {
          this.closeElement(chunk, i, byte === CLOSE_BRACKET);
          continue;
        }
        if (!this.elementOpen) {
          this.elementOpen = true;
          this.elementStart = i;
        }
      }
      this.readStructuralByte(byte);
    }
    if (this.elementOpen) this.elementPieces.push(chunk.subarray(this.elementStart));
  }

  /** Checks that the body was complete and held a `verify_responses` list. */
  end(): void {
    if (!this.started) throw invalid('Expecting value');
    if (this.depth !== 0 || this.inString) throw invalid('Unterminated JSON object');
    if (!this.foundTarget) throw new RequestValidationError([missingField(['body', TARGET_KEY])]);
  }

  private readStringByte(byte: number): void {
    if (this.escaped) this.escaped = false;
    else if (byte === BACKSLASH) this.escaped = true;
    else if (byte === QUOTE) {
      this.inString = false;
      if (this.stringBytes) this.lastTopLevelString = Buffer.from(this.stringBytes).toString('utf8');
      this.stringBytes = null;
      return;
    }
    if (this.stringBytes && this.stringBytes.length < MAX_KEY_BYTES) this.stringBytes.push(byte);
  }

  private readStructuralByte(byte: number): void {
    switch (byte) {
      case QUOTE:
        this.inString = true;
        this.stringBytes = this.depth === 1 ? [] : null;
        break;
      case OPEN_BRACE:
      case OPEN_BRACKET:
        this.depth++;
        break;
      case CLOSE_BRACE:
      case CLOSE_BRACKET:
        this.depth--;
        break;
      case COLON:
        if (this.depth === 1) this.expectingTarget = this.lastTopLevelString === TARGET_KEY;
        break;
    }
  }

  /** Ends the current element at `end` (a comma, or the list's closing bracket). */
  private closeElement(chunk: Buffer, end: number, closesList: boolean): void {
    if (closesList) {
      this.inTarget = false;
      this.depth = 1;
    }
    if (!this.elementOpen) {
      if (!closesList || this.elementCount > 0) throw invalid('Expecting value');
      return;
    }
    let text: string;
    if (this.elementPieces.length === 0) {
      text = chunk.toString('utf8', this.elementStart, end);
    } else {
      this.elementPieces.push(chunk.subarray(this.elementStart, end));
      text = Buffer.concat(this.elementPieces).toString('utf8');
      this.elementPieces = [];
    }
    this.elementOpen = false;
    let element: unknown;
    try {
      element = JSON.parse(text);
    } catch (error) {
      throw invalid((error as Error).message);
    }
    const index = this.elementCount++;
    if (!isJsonObject(element)) {
      throw new RequestValidationError([
        { type: 'dict_type', loc: ['body', TARGET_KEY, index], msg: 'Input should be a valid dictionary', input: element },
      ]);
    }
    this.onElement(element, index);
  }
}
