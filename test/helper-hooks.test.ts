/**
 * Test files share worker processes (vitest.config.ts), so a helper module is imported once per
 * worker: a hook it registered at its top level would run for the first file that imported it
 * and never for the next. Helpers register hooks only inside functions a test file calls
 * (`rudderFixture`, `cleanUpAfterEachTest`, `restoreEnvironmentAfterAll`); the lanes' setup
 * files, which run again before each file, are the exception.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { expect, it } from "vitest";

const testRoot = import.meta.dirname;
const SETUP_FILES = ["helpers/file-end-cleanup.ts", "helpers/unit-lane-guard.ts"];

function helperModules(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return name === "fixtures" ? [] : helperModules(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

it("no helper module registers a hook when it is imported", () => {
  const offenders = helperModules(testRoot)
    .map((path) => relative(testRoot, path))
    .filter((path) => !SETUP_FILES.includes(path))
    .filter((path) =>
      /^(afterEach|afterAll|beforeEach|beforeAll)\(/m.test(
        readFileSync(join(testRoot, path), "utf8"),
      ),
    );
  expect(offenders).toEqual([]);
});
