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

# The sources, and the CLI bundled from them (scripts/build-cli.mjs; the postinstall above ran
# before they were here). Workflow code stays TypeScript: the worker bundles it for its sandbox.
COPY tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN node scripts/build-cli.mjs

# Any uid can run it (compose sets `user:`); the state dir (workflow bundle cache) is per container.
# MALLOC_ARENA_MAX: what bin/reverify.js's shebang sets, which `node bin/reverify.js` bypasses.
ENV TEMPORAL_ADDRESS=temporal:7233 \
    REVERIFY_STATE_DIR=/tmp/reverify-state \
    MALLOC_ARENA_MAX=2
USER node

ENTRYPOINT ["node", "bin/reverify.js"]
CMD ["worker"]
