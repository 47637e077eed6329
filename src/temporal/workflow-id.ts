import { createHash } from 'node:crypto';
import { basename, resolve } from 'node:path';

/**
 * The run's workflow id, derived from the absolute output path: one controller per output file,
 * and running the same command again attaches to the live run instead of starting a second writer.
 */
export function workflowIdForOutput(outputPath: string): string {
  const abs = resolve(outputPath);
  const hash = createHash('sha256').update(abs).digest('hex').slice(0, 16);
  const name = basename(abs).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80);
  return `reverify-${name}-${hash}`;
}
