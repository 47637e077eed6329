/**
 * The `/aggregate_metrics` request body of a group (spec §2.3), built on disk before it is sent:
 * its length is then known, so it goes out with a `Content-Length` header (some servers and
 * proxies refuse chunked request bodies), and a retried request sends the same file again. Memory
 * holds a chunk of the body, whatever the number of rows.
 */
import { open } from 'node:fs/promises';
import type { Place } from './place-file.js';
import { readBatches, RowReader } from './row-reader.js';
import { writeFully } from '../io/write-fully.js';

/** Body chunks are about this many characters: one write per chunk, not per row. */
const BODY_CHUNK_CHARS = 256 * 1024;

/**
 * The `/aggregate_metrics` body of `rows` (places, in the order to send), each read from disk and
 * stripped, in order, in chunks of about `BODY_CHUNK_CHARS`.
 */
export async function* aggregateRequestBody(
  files: readonly string[],
  rows: AsyncIterable<Place>,
  strip: (rowRaw: string) => string,
): AsyncGenerator<string> {
  const reader = new RowReader(files);
  try {
    let chunk = '{"verify_responses":[';
    let i = 0;
    for await (const batch of readBatches(rows)) {
      for (const text of await reader.texts(batch)) {
        chunk += (i++ ? ',' : '') + strip(text);
        if (chunk.length >= BODY_CHUNK_CHARS) {
          yield chunk;
          chunk = '';
        }
      }
    }
    yield chunk + ']}';
  } finally {
    await reader.close();
  }
}

/**
 * Writes the body of `rows` (see `aggregateRequestBody`) to `path` and returns its length in bytes.
 * A full disk (and the like) is a `DiskWriteError` naming `path`.
 */
export async function writeAggregateRequestBody(
  files: readonly string[],
  rows: AsyncIterable<Place>,
  strip: (rowRaw: string) => string,
  path: string,
): Promise<number> {
  const fh = await open(path, 'w');
  let bytes = 0;
  try {
    for await (const chunk of aggregateRequestBody(files, rows, strip)) {
      const data = Buffer.from(chunk, 'utf8');
      await writeFully(fh, data, null, path);
      bytes += data.length;
    }
  } finally {
    await fh.close();
  }
  return bytes;
}
