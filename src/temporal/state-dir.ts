import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The directory holding the embedded Temporal server's SQLite file, log and `server.json`:
 * `$REVERIFY_STATE_DIR`, else `$XDG_STATE_HOME/reverify`, else `~/.local/state/reverify`.
 * Created on demand. Stable across runs, so a restarted CLI finds its workflows again.
 */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir =
    nonEmpty(env.REVERIFY_STATE_DIR) !== undefined
      ? resolve(env.REVERIFY_STATE_DIR as string)
      : nonEmpty(env.XDG_STATE_HOME) !== undefined
        ? join(resolve(env.XDG_STATE_HOME as string), 'reverify')
        : join(nonEmpty(env.HOME) ?? homedir(), '.local', 'state', 'reverify');
  mkdirSync(dir, { recursive: true });
  return dir;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}
