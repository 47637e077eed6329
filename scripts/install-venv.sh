#!/usr/bin/env bash
# Installs pinned PyPI packages into <project>/.<name>/venv, for install-mlflow.sh and
# install-wandb.sh: `install-venv.sh NAME EXECUTABLE PACKAGE==VERSION...` (EXECUTABLE: the file of
# venv/bin/ that says the install is there). Idempotent: returns at once when the pinned versions
# are there (a stamp file names them). Never fails the set-up: when PyPI cannot be reached it prints
# the reason and writes it to .<name>/install-error, and the tests that need it fail with it.
# REVERIFY_SKIP_<NAME>_INSTALL (upper case) set: nothing is installed.
set -uo pipefail
name="$1"
executable="$2"
shift 2
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.$name"
venv="$dir/venv"
stamp="$dir/installed-$(printf '%s' "$*" | tr ' =' '-_')"
skip="REVERIFY_SKIP_$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')_INSTALL"
if [ -n "${!skip:-}" ]; then
  echo "reverify: $skip set; not installing $*"
  exit 0
fi
if [ -f "$stamp" ] && [ -x "$venv/bin/$executable" ]; then
  exit 0
fi
mkdir -p "$dir"
rm -f "$dir/install-error"
python="${PYTHON:-python3}"
log="$dir/install.log"
if "$python" -m venv "$venv" >"$log" 2>&1 &&
  PIP_ROOT_USER_ACTION=ignore "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >>"$log" 2>&1; then
  touch "$stamp"
  echo "reverify: installed $* (PyPI) at $venv"
  exit 0
fi
reason="$(grep -v '^\s*$' "$log" | tail -n 1)"
echo "could not install $* from PyPI: ${reason:-unknown error} (log: $log)" >"$dir/install-error"
echo "reverify: $(cat "$dir/install-error"); the tests that need it will fail with this reason" >&2
exit 0
