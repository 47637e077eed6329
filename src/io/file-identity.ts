import { stat } from 'node:fs/promises';
import { stampOf, type FileStamp } from '../contract/file-stamp.js';

/** A file's stamp now (`FileStamp`: what a plan records of the files it read), or null if it is gone. */
export async function fileNow(path: string): Promise<FileStamp | null> {
  try {
    return stampOf(await stat(path, { bigint: true }));
  } catch {
    return null;
  }
}
