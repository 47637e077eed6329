# reverify worker image (also runs any other `reverify` command: `docker run IMAGE run ...`).
# glibc base, not Alpine: Temporal's native worker bridge does not support musl.
FROM node:20-bookworm-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, for layer caching. The postinstall (scripts/install-temporal.mjs) would pip
# install the temporal CLI for the embedded dev server; workers talk to TEMPORAL_ADDRESS instead,
# and the script skips the download when TEMPORAL_CLI_PATH is set (only for this step).
COPY package.json package-lock.json ./
COPY scripts/install-temporal.mjs scripts/build-cli.mjs ./scripts/
RUN TEMPORAL_CLI_PATH=/nonexistent npm ci --omit=dev --no-audit --no-fund \
    && npm cache clean --force

# W&B's own client (the `wandb` Python package): the run's upload activity logs to W&B with it, in a
# child process (src/upload/wandb-upload.ts looks for .wandb/venv/bin/python under the project).
# Installed by the script the tests' set-up uses, with its pinned version; a failed install fails
# the build here (the script itself never fails a set-up).
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
COPY scripts/install-venv.sh scripts/install-wandb.sh scripts/wandb-upload.py ./scripts/
RUN bash scripts/install-wandb.sh \
    && test -x .wandb/venv/bin/python \
    && rm -rf /root/.cache/pip

# The sources, and the CLI bundled from them (scripts/build-cli.mjs; the postinstall above ran
# before they were here), and the workflow code's bundle for the worker's sandbox (dist/workflows/:
# a container's first worker does not run webpack).
COPY tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN node scripts/build-cli.mjs

# Any uid can run it (compose sets `user:`); the state dir (workflow bundle cache) is per container.
# MALLOC_ARENA_MAX, UV_THREADPOOL_SIZE: what bin/reverify.js's shebang sets, which `node bin/reverify.js` bypasses.
# WANDB_DIR: W&B keeps its run files there (the image's /app is not writable by the user).
ENV TEMPORAL_ADDRESS=temporal:7233 \
    REVERIFY_STATE_DIR=/tmp/reverify-state \
    WANDB_DIR=/tmp/reverify-wandb \
    MALLOC_ARENA_MAX=2 \
    UV_THREADPOOL_SIZE=16
USER node

ENTRYPOINT ["node", "bin/reverify.js"]
CMD ["worker"]
