# The project's workers and CLI in one image, for docker-compose.yml (official node:20 images only).
#   docker build -t temporal-outbox .
# Dependencies are installed here, at build time, on the image's own platform: the Temporal SDK's
# native core (@temporalio/core-bridge) must match the image's OS and libc, not the host's, and the
# host's node_modules are never read or written (.dockerignore leaves them out; no bind mount).

# ── Stage 1: dependencies, from the lockfile only (this layer is reused until it changes) ─────
FROM node:20-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Dev dependencies included: the workers and the CLI run TypeScript through tsx, as `npm run` does.
RUN npm ci --no-audit --no-fund

# ── Stage 2: runtime ──────────────────────────────────────────────────────────────────────────
FROM node:20-bookworm-slim AS runtime
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node . .
# Workers bundle their workflow code into .cache/workflow-bundles (OUTBOX_CACHE_DIR) at start.
RUN mkdir -p .cache && chown node:node .cache
USER node
# docker-compose.yml gives each service its own command (a worker with its heap cap, the setup
# step, the demo traffic); run alone, the image shows the CLI's commands.
CMD ["node", "--import", "tsx", "src/cli/main.ts", "--help"]
