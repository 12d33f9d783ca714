import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const sourceRoot = join(import.meta.dirname, "..", "src");

function listFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

describe("source files", () => {
  it("are ASCII only, as the seed asserts for its code", () => {
    const offenders = listFiles(sourceRoot)
      .filter((path) => [...readFileSync(path)].some((byte) => byte > 0x7f))
      .map((path) => relative(sourceRoot, path));
    expect(offenders).toEqual([]);
  });
});
