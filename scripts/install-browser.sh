#!/usr/bin/env sh
# Chromium for the run report's browser test (test/integration/report.test.ts), from the Debian
# packages. Idempotent: does nothing when /usr/bin/chromium exists; installs it as root; otherwise
# prints the command to run.
set -eu
if [ -x /usr/bin/chromium ]; then
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo present) at /usr/bin/chromium"
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
else
  echo "chromium is missing: run 'sudo apt-get install -y chromium' (the report's browser test needs /usr/bin/chromium)" >&2
  exit 1
fi
