import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { gymOverrideHint } from '../config/gym-overrides.js';
import { addFileCommands, addRunCommands, addRunControls, addDemoAndServers } from './commands.js';
import { addRunViews } from './view-commands.js';
import { shortHintsAfterErrors } from './error-hints.js';
import { describeFailure, EXIT_OK, EXIT_USER_ERROR } from './exit-codes.js';
import { limitHeapGrowth } from './heap-growth.js';
import { trace } from './trace.js';

/** The version in package.json. */
function packageVersion(): string {
  const path = fileURLToPath(new URL('../../package.json', import.meta.url));
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

async function main(argv: string[]): Promise<number> {
  const program = new Command('reverify')
    .description('Re-verify stored NeMo Gym rollouts as a durable Temporal workflow')
    .version(packageVersion(), '-V, --version', 'print the version of reverify')
    .exitOverride();
  let code = EXIT_OK;
  addRunCommands(program, (c) => (code = c));
  addRunViews(program);
  addFileCommands(program);
  addRunControls(program);
  addDemoAndServers(program);
  shortHintsAfterErrors(program);

  // Gym-style `++key=value` arguments: one line each naming the matching flag.
  const hints = argv
    .slice(2)
    .map(gymOverrideHint)
    .filter((h) => h !== null);
  if (hints.length > 0) {
    hints.forEach((h) => console.error(h));
    return EXIT_USER_ERROR;
  }
  try {
    await program.parseAsync(argv);
  } catch (err) {
    const e = err as { code?: string; exitCode?: number };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) return e.exitCode ?? 1;
    const { line, code: c } = describeFailure(err);
    console.error(line);
    code = c;
  }
  return code;
}

// Exit explicitly: Temporal's native runtime keeps handles open after the work is done.
trace('modules loaded');
limitHeapGrowth();
const exitCode = await main(process.argv);
trace('exit');
process.exit(exitCode);
