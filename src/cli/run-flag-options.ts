/**
 * The `run` options as commander options, all derived from their one declaration in
 * src/config/run-flags.ts (usage, help with the default, parser, choices), and commander's values
 * back into the run's raw options.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { longFlag, RUN_FLAG_LIST, type RunFlag } from '../config/run-flags.js';

export const collect = (v: string, prev?: string[]) => [...(prev ?? []), v];
export const int = (flag: string) => (v: string) => {
  if (!/^-?\d+$/.test(v.trim())) throw new InvalidArgumentError(`${flag} takes a whole number, got '${v}'`);
  // Beyond 2^53 - 1 a number is rounded: refused as written, not echoed rounded.
  if (!Number.isSafeInteger(Number(v)))
    throw new InvalidArgumentError(`${flag} is too large (got ${v.trim()}; at most ${Number.MAX_SAFE_INTEGER})`);
  return Number(v);
};
export const float = (flag: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n)) throw new InvalidArgumentError(`${flag} takes a number, got '${v}'`);
  return n;
};

/** Commander's attribute of a flag: `--rejudge-delay` -> `rejudgeDelay`, `--no-worker` -> `worker`. */
function attributeOf(f: RunFlag): string {
  return longFlag(f)
    .replace(/^--(no-)?/, '')
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** A declared flag (src/config/run-flags.ts) as a commander option: usage, help, parser, default. */
export function optionOf(f: RunFlag): Option {
  const words = f.usage.split(' ');
  const last = words[words.length - 1];
  const spec = last.startsWith('-') ? f.usage : [...words.slice(0, -1), `<${last.toLowerCase()}>`].join(' ');
  const shown = f.shownDefault.replace(/`/g, '');
  // Commander itself shows the default of a flag that has an initial value.
  const says = shown !== '' && f.initial === undefined && (f.kind === 'int' || f.kind === 'number' || f.kind === 'seconds');
  const help = f.meaning.replace(/`/g, '') + (says ? ` (default ${shown})` : '');
  const option = new Option(spec, help);
  if (f.required) option.makeOptionMandatory();
  const flag = longFlag(f);
  if (f.kind === 'int') option.argParser(int(flag));
  if (f.kind === 'seconds' || f.kind === 'number') option.argParser(float(flag));
  if (f.kind === 'list') option.argParser(collect);
  if (f.kind === 'choice') option.choices(f.choices!);
  if (f.initial !== undefined) option.default(f.initial);
  return option;
}

/** The heartbeat timeout of batch activities (also taken by `demo`). */
export const heartbeatFlag = RUN_FLAG_LIST.find((f) => longFlag(f) === '--heartbeat-timeout')!;

export function runOptions(cmd: Command): Command {
  for (const f of RUN_FLAG_LIST) cmd.addOption(optionOf(f));
  return cmd;
}

/** The run's raw options from commander's values: seconds in ms, switches false when absent, policies absent when absent. */
export function toRaw(o: Record<string, unknown>): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const f of RUN_FLAG_LIST) {
    if (f.key === null) continue;
    const v = o[attributeOf(f)];
    if (f.kind === 'seconds') raw[f.key] = v === undefined ? undefined : Math.round((v as number) * 1000);
    else if (f.kind === 'switch') raw[f.key] = v ?? false;
    // A policy and its `--no-` form share commander's attribute: true, false, or absent (keep the saved one).
    else if (f.kind === 'policy') raw[f.key] = v;
    else if (f.kind === 'list') raw[f.key] = v ?? [];
    else raw[f.key] = v;
  }
  return raw;
}
