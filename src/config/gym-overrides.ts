import { longFlag, RUN_FLAG_LIST } from './run-flags.js';

const TRUE = /^(true|1|yes|on)$/i;

/**
 * A hint for a NeMo Gym Hydra override given to `reverify run` (`++resume_from_cache=true`,
 * `+limit=10`): the matching flag, from the config keys declared in run-flags.ts. Null when `arg`
 * is not such an override.
 */
export function gymOverrideHint(arg: string): string | null {
  const m = /^\+{1,2}([A-Za-z_][\w.]*)=(.*)$/s.exec(arg);
  if (!m) return null;
  const [, key, value] = m;
  const head = `reverify takes flags, not Hydra overrides:`;
  const flag = RUN_FLAG_LIST.find((f) => f.gymKey === key);
  if (!flag) return `${head} '${arg}' has no matching flag; see \`reverify run --help\`.`;
  const long = longFlag(flag);
  if (flag.kind === 'policy') {
    const off = RUN_FLAG_LIST.find((f) => f.kind === 'negated' && f.key === flag.key)!;
    return `${head} pass ${TRUE.test(value) ? long : longFlag(off)} instead of ${arg}.`;
  }
  if (flag.kind === 'switch')
    return TRUE.test(value) ? `${head} pass ${long} instead of ${arg}.` : `${head} leave out ${arg} (${long} is off by default).`;
  return `${head} pass ${long} ${value} instead of ${arg}.`;
}
