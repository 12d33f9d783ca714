import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createGlobTool, findFiles } from "../../src/tools/glob-tool.js";
import { contextFor, makeWorkspace } from "./temp-workspace.js";

const { workspace, remove } = makeWorkspace("glob");
const outside = makeWorkspace("glob-outside");
afterAll(() => {
  remove();
  outside.remove();
});

function touch(path: string): void {
  mkdirSync(dirname(join(workspace, path)), { recursive: true });
  writeFileSync(join(workspace, path), "");
}

for (const path of [
  "README.md",
  "package.json",
  ".env",
  "src/index.ts",
  "src/app.tsx",
  "src/util/strings.ts",
  "src/util/deep/more/x.ts",
  "src/util/deep/notes.md",
  "test/a.test.ts",
  "test/b.test.ts",
  "a.txt",
  "a/b.txt",
  "docs/[draft].md",
  ".git/HEAD",
  ".git/objects/ab/cdef.ts",
  "lib/.git/config.ts",
]) {
  touch(path);
}
writeFileSync(join(outside.workspace, "far.ts"), "");
symlinkSync(outside.workspace, join(workspace, "linked-outside"));

const glob = createGlobTool();
const run = (pattern: string) => glob.execute({ pattern }, contextFor(workspace));
const list = async (pattern: string) => {
  const found = await findFiles(workspace, pattern, new AbortController().signal);
  if (!found.ok) throw new Error(found.error);
  return found.paths;
};

describe("glob tool", () => {
  it("matches recursively with ** and sorts the result", async () => {
    expect(await list("**/*.ts")).toEqual([
      "src/index.ts",
      "src/util/deep/more/x.ts",
      "src/util/strings.ts",
      "test/a.test.ts",
      "test/b.test.ts",
    ]);
  });

  it("supports *, ?, classes and braces", async () => {
    expect(await list("*.{json,md}")).toEqual(["README.md", "package.json"]);
    expect(await list("src/*.ts?")).toEqual(["src/app.tsx"]);
    expect(await list("test/[a-b].test.ts")).toEqual(["test/a.test.ts", "test/b.test.ts"]);
    expect(await list("test/[!a].test.ts")).toEqual(["test/b.test.ts"]);
    expect(await list("{src/util,test}/*.ts")).toEqual([
      "src/util/strings.ts",
      "test/a.test.ts",
      "test/b.test.ts",
    ]);
    expect(await list("src/**")).toHaveLength(5);
    expect(await list("src/util/**/*.md")).toEqual(["src/util/deep/notes.md"]);
    expect(await list("docs/\\[draft\\].md")).toEqual(["docs/[draft].md"]);
    expect(await list("src/util/deep/")).toEqual([
      "src/util/deep/more/x.ts",
      "src/util/deep/notes.md",
    ]);
  });

  it("sorts a sibling file before the same-named directory's contents", async () => {
    expect(await list("a*/**")).toEqual(["a/b.txt"]);
    expect(await list("**/*.txt")).toEqual(["a.txt", "a/b.txt"]);
  });

  it("lists dotfiles but skips .git everywhere", async () => {
    expect(await list(".*")).toEqual([".env"]);
    const all = await list("**/*");
    expect(all.some((path) => path.includes(".git"))).toBe(false);
    expect(all).toContain(".env");
  });

  it("does not follow a symlinked directory out of the workspace", async () => {
    for (const pattern of ["linked-outside/*.ts", "linked-outside/**"]) {
      const result = await run(pattern);
      expect(result.isError).toBe(true);
      expect(result.content).toContain("outside the workspace");
    }
    expect((await list("**/far.ts")).length).toBe(0);
  });

  it("accepts an absolute pattern inside the workspace", async () => {
    expect(await list(`${workspace}/src/*.ts`)).toEqual(["src/index.ts"]);
  });

  it("refuses patterns that leave the workspace", async () => {
    for (const pattern of ["../*", "src/../../**", "/etc/*", `${outside.workspace}/*.ts`]) {
      const result = await run(pattern);
      expect(result.isError).toBe(true);
      expect(result.content).toContain("outside the workspace");
    }
  });

  it("stops when the signal aborts", async () => {
    const result = await glob.execute(
      { pattern: "**/*" },
      contextFor(workspace, AbortSignal.abort()),
    );
    expect(result).toEqual({ content: "The search was cancelled.", isError: true });
  });

  it("says (no matches) when nothing matches", async () => {
    expect(await run("**/*.rs")).toMatchObject({ content: "(no matches)", isError: false });
    expect(await run("missing-dir/**/*.ts")).toMatchObject({
      content: "(no matches)",
      isError: false,
    });
  });

  it("keeps the smallest paths in order when capping a large result", async () => {
    const signal = new AbortController().signal;
    const full = await findFiles(workspace, "**/*", signal);
    const capped = await findFiles(workspace, "**/*", signal, 3);
    if (!full.ok || !capped.ok) throw new Error("search failed");
    expect(capped.paths).toEqual(full.paths.slice(0, 3));
    expect(capped.total).toBe(full.paths.length);
  });

  it("caps the listing at 200 lines and says how many were omitted", async () => {
    for (let index = 0; index < 250; index += 1) {
      touch(`many/file-${String(index).padStart(3, "0")}.log`);
    }
    const result = await run("many/*.log");
    const lines = result.content.split("\n");
    expect(lines).toHaveLength(201);
    expect(lines[0]).toBe("many/file-000.log");
    expect(lines[199]).toBe("many/file-199.log");
    expect(lines[200]).toBe("... 50 more paths omitted");
  });
});
