/**
 * The exporter keys of a NeMo Gym `--config` (spec §4.12, NeMo Gym 0.7.0 `config_types.py`):
 * MLflow is configured by `mlflow_tracking_uri`, `mlflow_experiment_name`, `mlflow_run_name`
 * (`mlflow_tracking_token` optional); W&B by `wandb_project`, `wandb_name`, `wandb_api_key`;
 * `upload_rollouts` (default true; legacy alias `upload_rollouts_to_wandb`, the new key wins)
 * gates the rollouts table. A secret is `****` once masked, and a masked config opens no exporter.
 */
import { resolve } from 'node:path';
import { loadGymConfigs, type GymConfig } from '../config/gym-config.js';
import { MASKED_VALUE } from '../contract/secrets.js';
/** The W&B keys: a W&B run is logged when all three are set (the key may come from `WANDB_API_KEY` instead). */
export const WANDB_KEYS = ['wandb_project', 'wandb_name', 'wandb_api_key'] as const;
/** The environment variable W&B's client reads its API key from. */
export const WANDB_KEY_ENV = 'WANDB_API_KEY';
/** The environment variable MLflow clients read a bearer token from when the config has none. */
export const MLFLOW_TOKEN_ENV = 'MLFLOW_TRACKING_TOKEN';

export interface MlflowTarget {
  trackingUri: string;
  experimentName: string;
  runName: string;
}

export interface WandbTarget {
  project: string;
  name: string;
  /** The API key (a secret: never passed to the workflow or printed). */
  apiKey: string;
  /** NeMo Gym's `results_dir`, when the config sets it: W&B's files go to `<results_dir>/wandb`. */
  resultsDir: string | null;
}

export interface UploadConfig {
  mlflow: MlflowTarget | null;
  /** W&B, when `wandb_project`, `wandb_name` and a key (config or `WANDB_API_KEY`) are set. */
  wandb: WandbTarget | null;
  /** The token, when the config has one (never passed to the workflow). */
  token: string | null;
  uploadRollouts: boolean;
  /** The W&B keys the config sets. */
  wandbKeys: string[];
  /** The merged config, for the exported `global_config.json` (masked before it is sent: `hideSecrets`, src/contract/secrets.ts). */
  data: Record<string, unknown>;
}

function text(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function wandbTarget(d: Record<string, unknown>, env: NodeJS.ProcessEnv): WandbTarget | null {
  const project = text(d.wandb_project);
  const name = text(d.wandb_name);
  const apiKey = text(d.wandb_api_key) ?? text(env[WANDB_KEY_ENV]);
  if (project === null || name === null || apiKey === null || apiKey === MASKED_VALUE) return null;
  return { project, name, apiKey, resultsDir: text(d.results_dir) };
}

/** The exporter settings of a merged config. */
export function uploadConfigOf(config: GymConfig, env: NodeJS.ProcessEnv = process.env): UploadConfig {
  const d = config.data;
  const uri = text(d.mlflow_tracking_uri);
  const experiment = text(d.mlflow_experiment_name);
  const runName = text(d.mlflow_run_name);
  const token = text(d.mlflow_tracking_token);
  const available = uri !== null && experiment !== null && runName !== null && token !== MASKED_VALUE;
  const flag = d.upload_rollouts ?? d.upload_rollouts_to_wandb;
  return {
    mlflow: available ? { trackingUri: uri, experimentName: experiment, runName } : null,
    wandb: wandbTarget(d, env),
    token,
    uploadRollouts: flag === undefined || flag === null ? true : flag !== false && flag !== 'false',
    wandbKeys: WANDB_KEYS.filter((k) => d[k] !== undefined && d[k] !== null),
    data: d,
  };
}

/** Reads the `--config` files (absolute or relative paths) and returns their exporter settings. */
export async function loadUploadConfig(configs: string[]): Promise<UploadConfig> {
  return uploadConfigOf(await loadGymConfigs(configs.map((c) => resolve(c))));
}

/** When some W&B keys are set but not all: one line naming the missing ones (null when W&B is configured or not asked for). */
export function wandbIncomplete(config: UploadConfig): string | null {
  if (config.wandb !== null || config.wandbKeys.length === 0) return null;
  const d = config.data;
  const missing = WANDB_KEYS.filter((k) => text(d[k]) === null && !(k === 'wandb_api_key' && text(process.env[WANDB_KEY_ENV]) !== null));
  const masked = d.wandb_api_key === MASKED_VALUE ? ' (wandb_api_key is masked: ****)' : '';
  return (
    `Warning: ${config.wandbKeys.join(', ')} in --config but ${missing.length > 0 ? `${missing.join(', ')} missing` : 'no usable API key'}${masked}: ` +
    `nothing goes to W&B. Set wandb_project, wandb_name and wandb_api_key (or ${WANDB_KEY_ENV}).`
  );
}
