/**
 * A file's identity as the plan reads it (the run store's identity digests, `start_or_resume`): the
 * first 64 bits of the SHA-256 of its non-blank lines' digests (`lineDigest`) in file order, as 16
 * hex digits. The plan digests every line it reads already, so this costs 8 bytes of hashing a line,
 * not another pass over the file: a changed, added, removed or reordered row changes it; blank lines
 * and line endings do not.
 */
import { createHash, type Hash } from 'node:crypto';
import type { LineDigest } from './line-digest.js';

const BUFFER_BYTES = 64 * 1024;

export class ContentDigest {
  private readonly hash: Hash = createHash('sha256');
  private readonly buf = Buffer.alloc(BUFFER_BYTES);
  private readonly view = new DataView(this.buf.buffer, this.buf.byteOffset, BUFFER_BYTES);
  private used = 0;

  add(d: LineDigest): void {
    if (this.used === BUFFER_BYTES) this.flush();
    this.view.setBigUint64(this.used, d, false);
    this.used += 8;
  }

  /** `add` of the digest whose halves are `hi` and `lo` (`digestNums`). */
  addHalves(hi: number, lo: number): void {
    if (this.used === BUFFER_BYTES) this.flush();
    this.view.setUint32(this.used, hi, false);
    this.view.setUint32(this.used + 4, lo, false);
    this.used += 8;
  }

  /** The digest of the lines added so far (the digest cannot be added to afterwards). */
  hex(): string {
    this.flush();
    return this.hash.digest('hex').slice(0, 16);
  }

  private flush(): void {
    this.hash.update(this.buf.subarray(0, this.used));
    this.used = 0;
  }
}
