#!/usr/bin/env bash
# What `npm test` does before vitest, on both cores at once: biome's lint and tsc over src, test,
# bench and scripts (about 31 s of CPU here) beside the build, tsc over the page and the tests'
# dependencies (scripts/ensure-test-deps.sh; about 27 s). Each side alone is one process at a
# time; side by side they take about the longer side's time instead of the sum (66 s before).
# The build's own tsc skips type checking (--noCheck): the first side type-checks src with the
# same options, so checking it twice would only cost time; `npm run build` alone still checks.
# Together these are package.json's "lint", "typecheck" and "build": keep them alike. Fails,
# after both sides end, when either side fails.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

(biome check . && tsc -p tsconfig.json --noEmit) &
checks=$!

tsc -p tsconfig.build.json --noCheck &&
  node scripts/bundle-cli.mjs &&
  vite build web --logLevel warn &&
  tsc -p web/tsconfig.json --noEmit &&
  bash scripts/ensure-test-deps.sh
built=$?

wait "$checks"
checked=$?

if [ "$checked" -ne 0 ]; then echo "prepare-tests: lint or typecheck failed" >&2; fi
if [ "$built" -ne 0 ]; then echo "prepare-tests: the build, the page's typecheck or the test dependencies failed" >&2; fi
[ "$checked" -eq 0 ] && [ "$built" -eq 0 ]
