# The service image: compiled JavaScript on Node 20 (glibc, for uWebSockets.js and chDB binaries).
# Two targets:
#   full (default)  embedded ClickHouse (chDB) included: runs with no SVC_CLICKHOUSE_URL.
#   slim            no chDB (about 540 MB less): for deployments that set SVC_CLICKHOUSE_URL. The service loads chDB
#                   only when it opens the embedded engine, so without SVC_CLICKHOUSE_URL this image fails at start.
# The version is a build argument: docker build --build-arg SVC_BUILD_VERSION=1.2.3 [--target slim] .
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY test ./test
COPY sql ./sql
ARG SVC_BUILD_VERSION
ENV SVC_BUILD_VERSION=${SVC_BUILD_VERSION}
# The compiled tests are not shipped.
RUN npm run build && npm prune --omit=dev && rm -rf dist/test

# chDB is a dependency, so `npm prune --omit` keeps it: the slim target removes it by hand.
FROM build AS build-slim
RUN rm -rf node_modules/chdb node_modules/@chdb

FROM node:20-bookworm-slim AS runtime
WORKDIR /app
# glibc malloc serves blocks of 1 MiB and more (the log writer's 8 MB batches) from their own mappings, returned
# when freed, instead of from a heap that stays at its high-water mark. Read at process start only.
ENV NODE_ENV=production SVC_DATA_DIR=/data MALLOC_MMAP_THRESHOLD_=1048576
# /data (the volume: embedded stores and the log spool) belongs to the service's user, not root.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
EXPOSE 8080
# /health answers 200 when every store is up (503 otherwise); node is in the image, curl is not.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.SVC_PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
USER node
CMD ["node", "dist/src/main.js"]

FROM runtime AS slim
COPY --from=build-slim /app/package.json ./
COPY --from=build-slim /app/node_modules ./node_modules
COPY --from=build-slim /app/dist ./dist
COPY --from=build-slim /app/sql ./sql

FROM runtime AS full
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/sql ./sql
