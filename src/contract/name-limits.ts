/**
 * The file system's limits on the names a run makes from its `--output`: every derived name
 * (src/contract/file-names.ts `derivedFiles`, with the temporary name it is written under) must fit,
 * or the run would fail at its first write, with nothing to retry. Checked before anything starts
 * (src/cli/build-spec.ts, before the workflow; again in src/run-checks/output-checks.ts). Pure: no file
 * system access.
 */
import { resolve, sep } from 'node:path';
import { ConfigError } from './errors.js';
import { derivedFiles, prefixedOutputPath } from './file-names.js';

/** The portable limit of one path component, in bytes (Linux's NAME_MAX; names are measured in UTF-8). */
export const NAME_MAX = 255;
/** The limit of a whole path, in bytes (Linux's PATH_MAX, counting its terminating NUL as the kernel does). */
export const PATH_MAX = 4096;
/**
 * The longest suffix of a temporary file beside a derived one (`.tmp-<pid>-<n>`, src/io/atomic-file.ts;
 * the pid at most Linux's PID_MAX_LIMIT, the per-process counter 9 digits).
 */
export const LONGEST_TEMP_SUFFIX = '.tmp-4194304-999999999';
/**
 * Room kept below the work directory for what the run makes in it (`round-N-XXXXXX/` scratch
 * directories, `r<round>-b<batch>.sidecar.part.partial`, their temporary files).
 */
export const WORK_DIR_ENTRY_RESERVE = 128;

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** The one-line refusal of a derived path over a limit, or null when every derived path fits. */
export function overlongNameProblem(outputPath: string, prefix: string): string | null {
  for (const f of derivedFiles(prefixedOutputPath(resolve(outputPath), prefix))) {
    const components = f.path.split(sep);
    const last = components.length - 1;
    for (const [i, name] of components.entries()) {
      const size = bytes(name) + (i === last && f.viaTemp ? bytes(LONGEST_TEMP_SUFFIX) : 0);
      if (size <= NAME_MAX) continue;
      const where = i === last ? `${f.what} '${f.path}'` : `the directory '${components.slice(0, i + 1).join(sep)}' of ${f.what}`;
      const temp = i === last && f.viaTemp ? ` (with its temporary suffix '${LONGEST_TEMP_SUFFIX}')` : '';
      return (
        `${where} would have a name of ${size} bytes${temp}, over the file system's limit of ${NAME_MAX} bytes per name: ` +
        `choose a shorter --output ${i === last ? 'name' : 'path'}`
      );
    }
    const below = f.role === 'workDir' ? WORK_DIR_ENTRY_RESERVE : f.viaTemp ? bytes(LONGEST_TEMP_SUFFIX) : 0;
    // + 1: the terminating NUL that PATH_MAX counts.
    if (bytes(f.path) + below + 1 > PATH_MAX) {
      const what =
        f.role === 'workDir' ? ` (with ${below} bytes kept for the files in it)` : below > 0 ? ' (with its temporary suffix)' : '';
      return (
        `${f.what} '${f.path}' would have a path of ${bytes(f.path) + below} bytes${what}, over the file system's limit of ` +
        `${PATH_MAX - 1} bytes per path: choose a shorter --output path`
      );
    }
  }
  return null;
}

/** Throws the one-line `ConfigError` of `overlongNameProblem`; call it before anything is written. */
export function refuseOverlongNames(outputPath: string, prefix: string): void {
  const problem = overlongNameProblem(outputPath, prefix);
  if (problem !== null) throw new ConfigError(problem);
}
