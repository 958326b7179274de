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
ENV NODE_ENV=production SVC_DATA_DIR=/data
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/sql ./sql
VOLUME /data
EXPOSE 8080
USER node
CMD ["node", "dist/src/main.js"]
