#!/usr/bin/env bash
# Installs the pinned W&B client (PyPI `wandb`, W&B's own Python SDK) into <project>/.wandb/venv: the
# W&B upload (src/upload/wandb-log.py) runs under this interpreter. `orjson` comes too, for the tests
# that compare reverify's exported rows with orjson's serialisation (NeMo Gym's). Idempotent: returns
# at once when the pinned versions are there. Never fails the set-up: when PyPI cannot be reached it
# prints the reason, and the W&B tests are skipped with that reason (.wandb/install-error).
set -uo pipefail
VERSION=0.31.0
ORJSON_VERSION=3.11.6
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.wandb"
venv="$dir/venv"
stamp="$dir/installed-$VERSION-$ORJSON_VERSION"
if [ -n "${REVERIFY_SKIP_WANDB_INSTALL:-}" ]; then
  echo "reverify: REVERIFY_SKIP_WANDB_INSTALL set; not installing wandb"
  exit 0
fi
if [ -f "$stamp" ] && [ -x "$venv/bin/python" ]; then
  exit 0
fi
mkdir -p "$dir"
rm -f "$dir/install-error"
python="${PYTHON:-python3}"
log="$dir/install.log"
if "$python" -m venv "$venv" >"$log" 2>&1 &&
  PIP_ROOT_USER_ACTION=ignore "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "wandb==$VERSION" "orjson==$ORJSON_VERSION" >>"$log" 2>&1; then
  touch "$stamp"
  echo "reverify: installed wandb $VERSION (PyPI) at $venv"
  exit 0
fi
reason="$(grep -v '^\s*$' "$log" | tail -n 1)"
echo "could not install wandb==$VERSION from PyPI: ${reason:-unknown error} (log: $log)" >"$dir/install-error"
echo "reverify: $(cat "$dir/install-error"); the W&B upload tests will be skipped" >&2
exit 0
