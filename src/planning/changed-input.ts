import { InputChangedError } from '../contract/errors.js';
import { inputChanged } from '../contract/input-changed.js';
import type { FileIdentity } from '../contract/run-spec.js';
import { fileNow } from '../io/file-identity.js';

/**
 * The error for a planned row no longer where the plan read it: names `path`, the row (`where`),
 * and what changed since the plan recorded the file (`files`: the plan's identities).
 */
export async function plannedRowChanged(files: FileIdentity[] | undefined, path: string, where: string): Promise<InputChangedError> {
  const planned = files?.find((f) => f.path === path);
  return new InputChangedError(inputChanged(path, where, planned, await fileNow(path)));
}
