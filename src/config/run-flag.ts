/** The shape of one `reverify run` flag's declaration (the list is run-flags.ts). */
/** How a flag's text becomes a value. */
/**
 * `policy`: a switch saved with the run, with a `--no-` form beside it (a `negated` flag of the same
 * key): absent, a `--resume` keeps what the run saved (a new run: off).
 */
export type FlagKind = 'path' | 'list' | 'int' | 'number' | 'seconds' | 'switch' | 'policy' | 'negated' | 'choice';

export interface RunFlag {
  /** As docs/usage.md and help show it: `--limit N`, `-o, --output PATH`. */
  usage: string;
  /** The field of the run's raw options it sets (seconds are set in ms); null: the command's own. */
  key: string | null;
  kind: FlagKind;
  required?: boolean;
  meaning: string;
  /** The default as shown ('' when there is none). */
  shownDefault: string;
  /** The value commander starts from, for a flag of the command itself (the heartbeat timeout). */
  initial?: unknown;
  /** The values a `choice` flag takes. */
  choices?: readonly string[];
  /** NeMo Gym's config key for it (`gym eval reverify`'s Hydra override `++key=value`), if any. */
  gymKey?: string;
}
