"""Logs a finished reverify run to Weights & Biases with W&B's own client (`wandb`), as NeMo Gym
0.7.0's W&B exporter logs a reverification: one run (`wandb.init(project, name, dir)`), the masked
config (`run.config.update`), the rollouts as one `Rollouts` table of one `Rollout` column whose
cells are each row's orjson bytes, the aggregate metrics in one `run.log`, the coverage metrics in
another (with reverify's `failures/*`, the seed's `failure_export_metrics()`, in the same step), then
`run.finish()`. src/upload/wandb-upload.ts spawns it and prepares everything it logs
(the exported rows, metric names, the masked config); this script only reads values and logs.

Reads one JSON spec on stdin:
  project, name: the run; dir: where W&B keeps its run files (null: WANDB_DIR or the cwd);
  config: the masked config; rollouts: a file of exported rows, one per line, or null;
  metrics_file + metric_picks ([name, entry index, field, key]): the aggregate metrics, values read
  from the file so ints stay ints and floats floats; null when the run has no aggregate metrics;
  coverage, failures: [[name, value], ...] (the coverage and the failure export metrics).
The API key comes in the environment (WANDB_API_KEY), never on stdin or argv.
Writes one JSON line on stdout: {"run_id", "run_dir", "offline", "rows", "metrics"}, or
{"step", "error"} and exit status 1 when a step failed (the steps after it still run, as NeMo Gym's
exporter goes on after a failed log).
"""

import json
import sys


def fail(step, err):
    print(json.dumps({"step": step, "error": f"{type(err).__name__}: {err}".splitlines()[0]}))
    sys.exit(1)


def main():
    spec = json.load(sys.stdin)
    try:
        import wandb
        import wandb.util
    except Exception as err:  # wandb missing or broken in this interpreter
        fail("opening the run", err)
    # As NeMo Gym: rollouts are large.
    wandb.util.VALUE_BYTES_LIMIT = 10_000_000
    try:
        init = {"project": spec["project"], "name": spec["name"]}
        if spec.get("dir"):
            init["dir"] = spec["dir"]
        run = wandb.init(**init)
    except Exception as err:
        fail("opening the run", err)

    failed = None
    rows = None
    metrics = 0

    def step(name, body):
        nonlocal failed
        try:
            body()
        except Exception as err:
            failed = failed or (name, err)

    step("config", lambda: run.config.update(spec["config"]))

    def log_rollouts():
        nonlocal rows
        with open(spec["rollouts"], "rb") as f:
            cells = [[line.rstrip(b"\n")] for line in f if line.strip()]
        run.log({"Rollouts": wandb.Table(data=cells, columns=["Rollout"])})
        rows = len(cells)

    if spec.get("rollouts"):
        step("Rollouts table", log_rollouts)

    def log_metrics(values):
        nonlocal metrics
        run.log(values, step=None, commit=True)
        metrics += len(values)

    if spec.get("metric_picks") is not None:

        def aggregate():
            with open(spec["metrics_file"], encoding="utf-8") as f:
                entries = json.load(f)
            log_metrics({name: entries[i][field][key] for name, i, field, key in spec["metric_picks"]})

        step("metrics", aggregate)
    step("coverage metrics", lambda: log_metrics({**dict(spec["coverage"]), **dict(spec.get("failures") or [])}))

    offline = run.settings.mode in ("offline", "dryrun")
    result = {"run_id": run.id, "run_dir": run.dir.removesuffix("/files"), "offline": offline, "rows": rows, "metrics": metrics}
    try:
        run.finish()
    except Exception as err:
        failed = failed or ("finishing the run", err)
    if failed:
        fail(*failed)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
