#!/usr/bin/env bash
# What `npm test` does before vitest, on both cores at once: the checks (biome's lint, tsc over
# src, test, bench and scripts, tsc over the page) beside the build and the tests' dependencies
# (scripts/ensure-test-deps.sh). Each side alone is one process at a time; side by side they
# take about the longer side's time instead of the sum. The build's own tsc skips type checking
# (--noCheck): the checks side type-checks src with the same options, so checking it twice would
# only cost time. Fails (after both sides end) when either side fails; `npm run build` alone
# still type-checks as before; the build steps here are package.json's "build", keep them alike.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

(npm run --silent lint && npm run --silent typecheck) &
checks=$!

tsc -p tsconfig.build.json --noCheck &&
  node scripts/bundle-cli.mjs &&
  vite build web --logLevel warn &&
  bash scripts/ensure-test-deps.sh
built=$?

wait "$checks"
checked=$?

if [ "$checked" -ne 0 ]; then echo "prepare-tests: lint or typecheck failed" >&2; fi
if [ "$built" -ne 0 ]; then echo "prepare-tests: the build or the test dependencies failed" >&2; fi
[ "$checked" -eq 0 ] && [ "$built" -eq 0 ]
