#!/usr/bin/env bash
# Installs the pinned W&B client (PyPI `wandb`, W&B's own Python SDK) into <project>/.wandb/venv: the
# W&B upload runs under this interpreter. `orjson` comes too, for the tests that compare reverify's
# exported rows with orjson's serialisation (NeMo Gym's). See install-venv.sh.
exec bash "$(dirname "$0")/install-venv.sh" wandb python "wandb==0.31.0" "orjson==3.11.6"
