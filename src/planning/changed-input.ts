import { InputChangedError } from '../contract/errors.js';
import { inputChanged } from '../contract/input-changed.js';
import type { FileStamp } from '../contract/file-stamp.js';
import type { FileIdentity } from '../contract/run-spec.js';
import { fileNow } from '../io/file-identity.js';

/**
 * The error for a planned row no longer where the plan read it: names `path`, the row (`where`),
 * and what changed since the plan recorded the file (`plan.files`: the plan's identities), and the
 * way on (an ATIF plan's run cannot be resumed).
 */
export async function plannedRowChanged(
  plan: { files?: FileIdentity[]; inputFormat?: 'atif' },
  path: string,
  where: string,
): Promise<InputChangedError> {
  const planned = plan.files?.find((f) => f.path === path);
  return new InputChangedError(inputChanged(path, where, planned, await fileNow(path), plan.inputFormat === 'atif'));
}

/** The error for a planned file whose stamp (`now`) is not the one the plan recorded (`planned`): written to since. */
export function plannedFileChanged(plan: { inputFormat?: 'atif' }, planned: FileIdentity, now: FileStamp): InputChangedError {
  return new InputChangedError(inputChanged(planned.path, null, planned, now, plan.inputFormat === 'atif'));
}
