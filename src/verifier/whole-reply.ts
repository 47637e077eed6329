/**
 * One HTTP request whose reply is wanted whole, as bytes: undici's `dispatch` with a handler that
 * collects the body's chunks, instead of `request()`'s body stream (a `Readable` per reply, and its
 * `nextTick`s and promises: at thousands of `/verify` calls per second they were a visible share of
 * the worker's profile). The same abort semantics as `request()` with a `signal`: an abort before
 * the request reaches a socket takes effect when it does, and the call rejects with the reason.
 */
import type { Dispatcher } from 'undici';
import type { RequestSignal } from './deadlines.js';

export interface WholeReply {
  status: number;
  /** The `Retry-After` header, if any. */
  retryAfter: string | undefined;
  /** The body as received (`replyText` decodes it as `request()`'s `body.text()` would). */
  body: Buffer;
}

/** Sends `opts` through `dispatcher`; resolves with the final status, `Retry-After` and body. */
export function dispatchWhole(dispatcher: Dispatcher, opts: Dispatcher.DispatchOptions, signal: RequestSignal): Promise<WholeReply> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(opts, new WholeReplyHandler(signal, resolve, reject));
  });
}

/** Index of a body's first byte after its UTF-8 byte order mark, if it has one (`body.text()` skips it). */
export function afterByteOrderMark(body: Uint8Array): number {
  return body.length > 2 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
}

/** A body as text, as undici's `body.text()` gives it: UTF-8, a byte order mark skipped. */
export function replyText(body: Buffer): string {
  return body.toString('utf8', afterByteOrderMark(body));
}

class WholeReplyHandler implements Dispatcher.DispatchHandler {
  private status = 0;
  private retryAfter: string | undefined = undefined;
  private chunks: Buffer[] = [];
  private controller: Dispatcher.DispatchController | null = null;
  private readonly onAbort = () => this.controller?.abort(this.signal.reason as Error);

  constructor(
    private readonly signal: RequestSignal,
    private readonly resolve: (reply: WholeReply) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.signal.aborted) {
      controller.abort(this.signal.reason as Error);
      return;
    }
    this.controller = controller;
    this.signal.once('abort', this.onAbort);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // A 1xx informational reply is followed by the real one.
    this.status = statusCode;
    this.chunks = [];
    const retryAfter = headers['retry-after'];
    this.retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.end();
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.resolve({ status: this.status, retryAfter: this.retryAfter, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    this.end();
    this.reject(error);
  }

  private end(): void {
    this.signal.removeListener('abort', this.onAbort);
    this.controller = null;
  }
}
