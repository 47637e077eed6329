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
/** A sidecar row's failure detail (NeMo Gym's), shown before `error`. */
export const FAILURE_MESSAGE_KEY = '_ng_failure_message';
/** Non-null marks a failed attempt: the row goes to the sidecar. */
export const FAILURE_CLASS_KEY = '_ng_failure_class';
/** Truthy on a sidecar row: the key is never retried on resume. */
export const FAILURE_TERMINAL_KEY = '_ng_failure_terminal';
/** Truthy: the result is written nowhere (kill-shaped). Wins over a failure class. */
export const NO_PERSIST_KEY = '_ng_no_persist';
/**
 * Truthy on a sidecar row: an intentional omission (the seed's `record_omission`: class `skipped`,
 * terminal). Never retried, never aggregated, counted as intentionally omitted, not failed.
 */
export const OMITTED_KEY = '_ng_omitted';
/** A failed judge call: the class `--judge-failed-only` recovers (also `judge_invalid` with `--retry-invalid-judge-responses`). */
export const JUDGE_FAILED_CLASS = 'judge_failed';
/**
 * NeMo Gym 0.7.0: the judge answered but its verdict could not be scored (a result flagged
 * `invalid_judge_response`, routed to the sidecar under `retry_invalid_judge_responses`). Not terminal.
 */
export const JUDGE_INVALID_CLASS = 'judge_invalid';
/** NeMo Gym 0.7.0: the class of an invalid verdict whose result says `invalid_judge_retryable: false` (terminal). */
export const PERMANENT_CLASS = 'permanent';
/** NeMo Gym 0.7.0: a `/verify` result field; truthy when the judge's verdict could not be scored. */
export const INVALID_JUDGE_RESPONSE_KEY = 'invalid_judge_response';
/** NeMo Gym 0.7.0: a `/verify` result field; exactly `false` makes an invalid verdict permanent. */
export const INVALID_JUDGE_RETRYABLE_KEY = 'invalid_judge_retryable';
/** NeMo Gym 0.7.0: marks a sidecar row moved out of a rollouts file (makes the move idempotent). */
export const MIGRATED_INVALID_JUDGE_KEY = '_ng_migrated_invalid_judge_response';
/** NeMo Gym 0.7.0: set on a moved row whose `deliverables_dir` still holds a deliverable. */
export const REUSE_CACHED_DELIVERABLE_KEY = 'reuse_cached_deliverable';
/** A result's score; a number (not a bool) makes the rollout measured (the run store's coverage). */
export const REWARD_KEY = 'reward';
/** Truthy on a result its producer masked: scored, but not a measurement (the run store's `masked`). */
export const MASK_SAMPLE_KEY = 'mask_sample';
/** Stamped by collection on resumed retries (spec §1.0); part of a moved row's identity. */
export const ATTEMPT_INDEX_KEY = '_ng_attempt_index';
/** Newer NeMo Gym's run identity of a managed run's rows (kept by a settled re-judgment). */
export const RUN_ID_KEY = '_ng_run_id';
/** Newer NeMo Gym's logical rollout identity (kept by a settled re-judgment). */
export const ROLLOUT_ID_KEY = '_ng_rollout_id';
/** The operation id a settled re-judgment carries (rejudgment.ts). */
export const OPERATION_ID_KEY = '_ng_operation_id';
/** Multi-stage collection's stage number: `--judge-failed-only` refuses rows that have it; part of a moved row's identity (0 when absent). */
export const STAGE_INDEX_KEY = 'stage_index';
/** The per-task timeout of an agent (terminal when stamped so). */
export const TIMEOUT_EXCEEDED_CLASS = 'timeout_exceeded';
/** A sample that cannot be run: terminal even under `--retry-terminal-timeouts`. */
export const SKIPPED_CLASS = 'skipped';
/**
 * NeMo Gym 0.7.0's "repairable environment" classes (GDPVal): faults of the deliverable tree that can
 * be repaired after a run, retried under `retry_terminal_timeouts` even when stamped terminal.
 */
export const REPAIRABLE_ENVIRONMENT_CLASSES: readonly string[] = ['reference_missing', 'eval_missing', 'transport_ineligible'];
/**
 * Newer NeMo Gym only (spec §4.2, §5.4): a row's task source; when it names a resources-server
 * block it is the authoritative route, and it is kept on output rows.
 */
export const TASK_SOURCE_KEY = 'task_source';
/**
 * NeMo Gym 0.7.0: the environment server that ran a rollout, stamped on materialized rows (and on
 * collection's results). When it names a config block whose `environment_servers` implementation
 * has `resources_server.name`, that server verifies the row (after `task_source`, before the agent);
 * it is kept on output rows, and aggregation groups rows by it (falling back to the agent's name).
 */
export const ENVIRONMENT_SERVER_KEY = '_ng_environment_server';
/** NeMo Gym 0.7.0 materialized task rows: the task's identity (`{taskset, task_id}`), not sent to `/verify`. */
export const TASK_ID_KEY = 'task_id';
/** NeMo Gym 0.7.0 materialized task rows: the task's fields, lifted to the top of the `/verify` body. */
export const TASK_INPUT_KEY = 'task_input';
/** Inside `task_input`: the historical single-agent container of task fields, lifted too. */
export const TASK_DATA_KEY = 'task_data';
/**
 * A rollout's artifact directory, carried from the rollout into the `/verify` body (file-backed
 * verifiers); also read to decide a moved row's `reuse_cached_deliverable`.
 */
export const DELIVERABLES_DIR_KEY = 'deliverables_dir';
/** The reference subset a rollout was compared with, carried from the rollout into the `/verify` body. */
export const REFERENCE_IDS_KEY = 'reference_ids';
/** Rollout fields carried into the `/verify` body when the rollout has them, in this order (0.7.0). */
export const CARRIED_ROLLOUT_KEYS = [DELIVERABLES_DIR_KEY, REFERENCE_IDS_KEY] as const;
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
