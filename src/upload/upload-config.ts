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
/** The W&B keys; reverify has no W&B exporter (see docs/operating.md, "Upload to MLflow"). */
export const WANDB_KEYS = ['wandb_project', 'wandb_name', 'wandb_api_key'] as const;
/** The environment variable MLflow clients read a bearer token from when the config has none. */
export const MLFLOW_TOKEN_ENV = 'MLFLOW_TRACKING_TOKEN';

export interface MlflowTarget {
  trackingUri: string;
  experimentName: string;
  runName: string;
}

export interface UploadConfig {
  mlflow: MlflowTarget | null;
  /** The token, when the config has one (never passed to the workflow). */
  token: string | null;
  uploadRollouts: boolean;
  /** The W&B keys the config sets (a W&B exporter would open when all three are set). */
  wandbKeys: string[];
  /** The merged config, for the exported `global_config.json` (masked before it is sent: `hideSecrets`, src/contract/secrets.ts). */
  data: Record<string, unknown>;
}

function text(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** The exporter settings of a merged config. */
export function uploadConfigOf(config: GymConfig): UploadConfig {
  const d = config.data;
  const uri = text(d.mlflow_tracking_uri);
  const experiment = text(d.mlflow_experiment_name);
  const runName = text(d.mlflow_run_name);
  const token = text(d.mlflow_tracking_token);
  const available = uri !== null && experiment !== null && runName !== null && token !== MASKED_VALUE;
  const flag = d.upload_rollouts ?? d.upload_rollouts_to_wandb;
  return {
    mlflow: available ? { trackingUri: uri, experimentName: experiment, runName } : null,
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

/** The W&B refusal, one line: reverify logs to MLflow only. */
export function wandbRefusal(keys: string[]): string {
  return (
    `Warning: ${keys.join(', ')} in --config: reverify cannot upload to W&B (there is no maintained JavaScript W&B client ` +
    `that logs tables; see docs/operating.md, "Upload to MLflow"); nothing goes to W&B. Use MLflow (mlflow_* keys) or NeMo Gym's exporter.`
  );
}
