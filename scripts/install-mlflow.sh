#!/usr/bin/env bash
# Installs the pinned MLflow tracking server (PyPI `mlflow`) into <project>/.mlflow/venv, for the
# upload tests (they start `mlflow server` with a SQLite backend). Idempotent: returns at once when
# the pinned version is already there. Never fails the set-up: when PyPI cannot be reached it prints
# the reason, and the MLflow tests are skipped with that reason (.mlflow/install-error).
set -uo pipefail
VERSION=3.17.2
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.mlflow"
venv="$dir/venv"
stamp="$dir/installed-$VERSION"
if [ -n "${REVERIFY_SKIP_MLFLOW_INSTALL:-}" ]; then
  echo "reverify: REVERIFY_SKIP_MLFLOW_INSTALL set; not installing mlflow"
  exit 0
fi
if [ -f "$stamp" ] && [ -x "$venv/bin/mlflow" ]; then
  exit 0
fi
mkdir -p "$dir"
rm -f "$dir/install-error"
python="${PYTHON:-python3}"
log="$dir/install.log"
if "$python" -m venv "$venv" >"$log" 2>&1 &&
  PIP_ROOT_USER_ACTION=ignore "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "mlflow==$VERSION" >>"$log" 2>&1; then
  touch "$stamp"
  echo "reverify: installed mlflow $VERSION (PyPI) at $venv"
  exit 0
fi
reason="$(grep -v '^\s*$' "$log" | tail -n 1)"
echo "could not install mlflow==$VERSION from PyPI: ${reason:-unknown error} (log: $log)" >"$dir/install-error"
echo "reverify: $(cat "$dir/install-error"); the MLflow upload tests will be skipped" >&2
exit 0
