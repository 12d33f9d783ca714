#!/usr/bin/env bash
# What `npm test` does before vitest, on both cores at once: biome's lint and tsc over src, test,
# bench and scripts (about 31 s of CPU here) beside the build, tsc over the page and then the
# tests' dependencies (scripts/ensure-test-deps.sh: in a fresh clone, six npm installs into .cache/
# that mostly wait on the registry, side by side; nothing once they are there). Each side alone is
# one process at a time; side by side they take about the longer side's time instead of the sum.
# The installs start after the build (started at once, beside the lint and the build, they ran
# no faster in a first try: both sides then compete for the two cores). A fresh clone at load
# 12-16: 278 s with the installs one after another, 137 s side by side.
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
  tsc -p web/tsconfig.json --noEmit
built=$?

bash scripts/ensure-test-deps.sh
installed=$?

wait "$checks"
checked=$?

if [ "$checked" -ne 0 ]; then echo "prepare-tests: lint or typecheck failed" >&2; fi
if [ "$built" -ne 0 ]; then echo "prepare-tests: the build or the page's typecheck failed" >&2; fi
if [ "$installed" -ne 0 ]; then echo "prepare-tests: the test dependencies failed" >&2; fi
[ "$checked" -eq 0 ] && [ "$built" -eq 0 ] && [ "$installed" -eq 0 ]
