#!/bin/sh
# Starts the service the way `npm start` should: compile only when a source is newer than the last build (a fresh
# clone has no dist/ and builds once), then replace this shell with node (exec), so that the signals a process
# manager sends to `npm start` reach the service itself and nothing is left running with the data directory's lock.
set -e
cd "$(dirname "$0")/.."
stamp=dist/build-info.json
if [ ! -f "$stamp" ] || [ -n "$(find src test sql scripts tsconfig.json package.json package-lock.json -newer "$stamp" -print 2>/dev/null | head -n 1)" ]; then
  node scripts/build.mjs >&2
fi
# glibc reads MALLOC_MMAP_THRESHOLD_ only at process start (docs/performance.md, "Memory"); an operator's value wins.
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-1048576}"
exec node dist/src/main.js "$@"
