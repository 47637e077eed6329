import type { Command } from 'commander';

/** `reverify server start` for a subcommand: the names from the program down. */
function fullName(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * After a usage error (an unknown flag, a missing value) commander prints its line and its
 * suggestion (`(Did you mean --concurrency?)`); then, instead of the whole help (about 110 lines
 * for `run`), one line naming the help of the command that refused. Set on every command, once
 * they are all declared.
 */
export function shortHintsAfterErrors(cmd: Command): void {
  const what = cmd.commands.length > 0 ? 'commands' : 'options';
  cmd.showSuggestionAfterError(true).showHelpAfterError(`(\`${fullName(cmd)} --help\` lists the ${what})`);
  cmd.commands.forEach(shortHintsAfterErrors);
}
