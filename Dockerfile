# The service image: compiled JavaScript on Node 20 (glibc, for uWebSockets.js and chDB binaries).
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
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
# glibc malloc serves blocks of 1 MiB and more (the log writer's 8 MB batches) from their own mappings, returned
# when freed, instead of from a heap that stays at its high-water mark. Read at process start only.
ENV NODE_ENV=production SVC_DATA_DIR=/data MALLOC_MMAP_THRESHOLD_=1048576
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/sql ./sql
VOLUME /data
EXPOSE 8080
USER node
CMD ["node", "dist/src/main.js"]
