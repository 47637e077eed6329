#!/usr/bin/env bash
# Installs the pinned MLflow tracking server (PyPI `mlflow`) into <project>/.mlflow/venv, for the
# upload tests (they start `mlflow server` with a SQLite backend). See install-venv.sh.
exec bash "$(dirname "$0")/install-venv.sh" mlflow mlflow "mlflow==3.17.2"
