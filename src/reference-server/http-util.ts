import type { IncomingMessage, ServerResponse } from 'node:http';

/** Reads the whole request body. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

/** Answers with a JSON text (already serialised). */
export function sendJsonText(res: ServerResponse, status: number, json: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

/** Answers with `value` serialised as JSON (indented by 2 and ended by a line break when `pretty`). */
export function sendJson(res: ServerResponse, status: number, value: unknown, pretty = false): void {
  sendJsonText(res, status, pretty ? `${JSON.stringify(value, null, 2)}\n` : JSON.stringify(value));
}

const STREAM_BATCH_CHARS = 64 * 1024;

/** Resolves when `res` can take more data, or when it is closed. */
function writable(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Answers with a JSON text given as consecutive pieces (chunked transfer, written in batches of
 * about 64 KiB, waiting for the socket to drain), so a large answer is never one string.
 */
export async function streamJsonText(res: ServerResponse, status: number, pieces: Iterable<string>): Promise<void> {
  res.writeHead(status, { 'content-type': 'application/json' });
  let batch = '';
  for (const piece of pieces) {
    batch += piece;
    if (batch.length < STREAM_BATCH_CHARS) continue;
    if (res.destroyed) return;
    if (!res.write(batch)) await writable(res);
    batch = '';
  }
  res.end(batch);
}

/**
 * The 500 body NeMo Gym servers send for an unhandled exception: a JSON string holding the
 * Python repr of the exception, e.g. `"ValueError('Duplicate ...')"`.
 */
export function pythonExceptionBody(pythonType: string, message: string): string {
  const quote = message.includes("'") && !message.includes('"') ? '"' : "'";
  const escaped = message.replaceAll('\\', '\\\\').replaceAll(quote, `\\${quote}`);
  return JSON.stringify(`${pythonType}(${quote}${escaped}${quote})`);
}
