# syntax=docker/dockerfile:1
# The Animal Store API image: one image for production, staging and the compose stack, told
# apart only by environment. It serves the API (`CMD`) and, as a separate one-shot job, applies
# migrations: `docker run --rm -e DATABASE_URL=... <image> node dist/database/migrate.main.js`.

ARG NODE_VERSION=24

# ---- build: every dependency, the generated Prisma client, the compiled app in dist/ ----
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the postinstall hook would generate the Prisma client before the schema
# is copied; it runs explicitly below instead.
RUN npm ci --ignore-scripts
COPY prisma.config.ts tsconfig.json tsconfig.build.json nest-cli.json ./
COPY scripts ./scripts
COPY prisma ./prisma
RUN npm run prisma:generate
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies, dist/ and the migrations; no compiler, no dev tools ----
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# The heap is sized for the service, not for the host: with V8's defaults on a large host the
# resident size keeps growing under load (`BENCH_SOAK=1 npm run bench`), and glibc keeps two
# malloc arenas rather than one per thread, whose free pages it would keep. docs/deployment.md,
# "Memory": what bounds the live heap, and how much memory a container needs.
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    NODE_OPTIONS="--max-old-space-size=512 --max-semi-space-size=16" \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
# dist/ holds the generated Prisma client too (compiled from src/generated/prisma).
COPY --from=build /app/dist ./dist
COPY prisma/migrations ./prisma/migrations
# The embedded database's default DATA_DIR, for running without DATABASE_URL (mount a volume).
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# Liveness only: the image has no curl, so Node itself asks /healthz.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The app drains on SIGTERM (readiness 503, SHUTDOWN_DELAY_MS, in-flight requests up to
# SHUTDOWN_TIMEOUT_MS) and exits 0; give it a stop timeout above their sum.
STOPSIGNAL SIGTERM
# V8's allocation-site pretenuring off, and the old generation let grow to twice what survives a
# full collection (docs/deployment.md, "Memory"): V8 flags that Node refuses in NODE_OPTIONS, so
# they are on the command line, as in `npm start`.
CMD ["node", "--no-allocation-site-pretenuring", "--heap-growing-percent=100", "dist/main.js"]
