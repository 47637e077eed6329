/**
 * The texts of NeMo Gym 0.7.0's ATIF input mode (`--input-format atif`) that users see: the flag
 * combinations it refuses and the stateless-verifier preflight. Reproduced as 0.7.0 words them.
 */
import { compareCodePoints } from './row-key.js';
import { pyStrRepr, pythonRepr } from './python-repr.js';

/** The input formats of `--input-format`. */
export const INPUT_FORMATS = ['gym', 'atif'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

/** A gym-format run without `--rollouts`. */
export function gymNeedsRollouts(): string {
  return 'native Gym reverification requires `rollouts_jsonl_fpath` (pass --rollouts).';
}

/** `--atif-manifest` without `--input-format atif`. */
export function manifestNeedsAtif(): string {
  return '`atif_manifest_jsonl_fpath` is only valid with input_format=atif.';
}

/** An ATIF run without `--atif-manifest`. */
export function atifNeedsManifest(): string {
  return 'ATIF reverification requires `atif_manifest_jsonl_fpath` (pass --atif-manifest).';
}

/** An ATIF run with `--rollouts`. */
export function atifWithRollouts(): string {
  return '`rollouts_jsonl_fpath` cannot be combined with input_format=atif.';
}

/** An ATIF run with `--judge-failed-only` or `--append`. */
export function atifWithRecovery(): string {
  return 'ATIF reverification does not support judge-failure recovery or append mode.';
}

/** An ATIF run with `--force`. */
export function atifWithForce(): string {
  return 'ATIF reverification requires a stateless verifier; --force is not supported.';
}

/** An ATIF run with `--resume`. */
export function atifWithResume(): string {
  return 'ATIF reverification does not support --resume until cache keys include source hashes.';
}

/** The preflight's refusal: a selected resources server is not `stateless` (names sorted, as 0.7.0 lists them). */
export function atifNeedsStateless(names: readonly string[]): string {
  return (
    `ATIF reverification requires stateless verifiers; resource server(s) ${pythonRepr([...names].sort(compareCodePoints))} ` +
    'reported reverify_mode=UNSUPPORTED or UNKNOWN.'
  );
}

/** The preflight's refusal of a row with function calls routed to a server that exposes its tools over MCP. */
export function mcpToolCallsRefused(server: string): string {
  return (
    `Relay ATIF tool calls cannot be reverified against MCP-exposed resources server ${pyStrRepr(server)}: ` +
    "ATIF proves call/result correlation but does not carry Gym's canonical (server_name, tool_name) provenance. " +
    'Use a non-MCP stateless verifier or a text-only trajectory.'
  );
}

/** Ours: printed when an ATIF run's plan phase starts. */
export function atifPlanning(): string {
  return 'Planning: checking the ATIF manifest, every trajectory it lists and the materialized inputs, and joining them by key';
}
