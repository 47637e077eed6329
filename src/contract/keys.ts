/**
 * Key names and constants of the NeMo Gym data contract (spec §1.0). These strings are part of the
 * on-disk format: never change them.
 */

/** Task id within a run (int >= 0). First half of a row's key. */
export const TASK_INDEX_KEY = '_ng_task_index';
/** Repeat number within a task (int >= 0). Second half of a row's key. */
export const ROLLOUT_INDEX_KEY = '_ng_rollout_index';
/** `{"name": str, ...}`: which agent produced the rollout. Only `.name` is read. */
export const AGENT_REF_KEY = 'agent_ref';
/** Run-level skills stamp, copied through. */
export const SKILLS_REF_KEY = 'skills_ref';
/** The policy's Responses-API response object (the expensive artifact). */
export const RESPONSE_KEY = 'response';
/** OpenAI Responses-API create params. */
export const RESPONSES_CREATE_PARAMS_KEY = 'responses_create_params';
/** Non-null marks a failed attempt: the row goes to the sidecar. */
export const FAILURE_CLASS_KEY = '_ng_failure_class';
/** Truthy on a sidecar row: the key is never retried on resume. */
export const FAILURE_TERMINAL_KEY = '_ng_failure_terminal';
/** Truthy: the result is written nowhere (kill-shaped). Wins over a failure class. */
export const NO_PERSIST_KEY = '_ng_no_persist';
/** The only failure class `--judge-failed-only` recovers. */
export const JUDGE_FAILED_CLASS = 'judge_failed';
/**
 * Newer NeMo Gym only (spec §4.2, §5.4): a row's task source; when it names a resources-server
 * block it is the authoritative route, and it is kept on output rows.
 */
export const TASK_SOURCE_KEY = 'task_source';
/**
 * Ours, not NeMo Gym's: the failure class of a sidecar row written for a 4xx reply of `/verify`
 * (NeMo Gym aborts the whole run instead, spec §8.1).
 */
export const VERIFY_REJECTED_CLASS = 'verify_rejected';
/**
 * NeMo Gym's class for a verify-side 5xx/connection/timeout failure (spec §1.5, not terminal). We
 * write it for a row whose `/verify` kept answering 5xx while the server answered other rows.
 */
export const TRANSIENT_CLASS = 'transient';
/**
 * NeMo Gym 0.7.0's ATIF mode: where a result names the trajectory it was scored from
 * (`{trajectory_id, session_id, source_sha256, schema_version, projection_status}`). Stamped on
 * result rows, never sent to `/verify` nor to `/aggregate_metrics`.
 */
export const ATIF_PROVENANCE_KEY = '_ng_atif_provenance';
/** The class of a no-persist (kill-shaped) result, which ATIF mode writes to the sidecar instead of dropping. */
export const KILL_SHAPED_CLASS = 'kill_shaped';
/** Collection-side trajectory evidence (dropped by `gym eval aggregate`, kept by reverify). */
export const TRAJECTORY_KEY = 'ng_trajectory';
/** Collection-side model-call capture (dropped by `gym eval aggregate`, kept by reverify). */
export const MODEL_CALL_CAPTURE_KEY = 'ng_model_call_capture';
/** Collection-side agent observations (dropped by `gym eval aggregate`, kept by reverify). */
export const AGENT_OBSERVATIONS_KEY = 'ng_agent_observations';
/** Environment variable holding the attempt cap for "maxed-out" keys. */
export const MAX_ATTEMPTS_ENV = 'NEMO_GYM_MAX_ROLLOUT_ATTEMPTS';
/** Attempt cap when the environment variable is unset, empty or invalid. */
export const DEFAULT_MAX_ATTEMPTS = 3;
/** Output name prefix used with `--force` against unsafe servers. */
export const UNSAFE_PREFIX = 'unsafe_' as const;
