import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveInWorkspace } from "../../src/tools/workspace-path.js";
import { makeWorkspace } from "./temp-workspace.js";

const { workspace, remove } = makeWorkspace("workspace-path");
const outside = makeWorkspace("outside");
afterAll(() => {
  remove();
  outside.remove();
});

mkdirSync(join(workspace, "src"));
writeFileSync(join(workspace, "src", "a.txt"), "a");
writeFileSync(join(outside.workspace, "secret.txt"), "secret");
symlinkSync(join(outside.workspace, "secret.txt"), join(workspace, "file-link"));
symlinkSync(outside.workspace, join(workspace, "dir-link"));
symlinkSync(join(outside.workspace, "not-yet"), join(workspace, "dangling-link"));
symlinkSync(join(workspace, "src"), join(workspace, "inner-link"));
symlinkSync("loop-b", join(workspace, "loop-a"));
symlinkSync("loop-a", join(workspace, "loop-b"));

describe("resolveInWorkspace", () => {
  it("resolves relative and absolute paths inside", () => {
    expect(resolveInWorkspace(workspace, "src/a.txt")).toEqual({
      ok: true,
      path: join(workspace, "src", "a.txt"),
    });
    expect(resolveInWorkspace(workspace, join(workspace, "src"))).toEqual({
      ok: true,
      path: join(workspace, "src"),
    });
    expect(resolveInWorkspace(workspace, "src/../src/new/deep.txt")).toEqual({
      ok: true,
      path: join(workspace, "src", "new", "deep.txt"),
    });
    expect(resolveInWorkspace(workspace, ".")).toEqual({ ok: true, path: workspace });
  });

  it("follows symlinks that stay inside", () => {
    expect(resolveInWorkspace(workspace, "inner-link/a.txt")).toEqual({
      ok: true,
      path: join(workspace, "src", "a.txt"),
    });
  });

  it.each([
    ["../escape.txt"],
    ["src/../../escape.txt"],
    ["/etc/passwd"],
    ["file-link"],
    ["dir-link/secret.txt"],
    ["dir-link/new/file.txt"],
    ["dangling-link"],
    ["dangling-link/child.txt"],
  ])("refuses %s", (path) => {
    const result = resolveInWorkspace(workspace, path);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain("outside the workspace");
  });

  it("refuses link loops and empty paths", () => {
    expect(resolveInWorkspace(workspace, "loop-a").ok).toBe(false);
    expect(resolveInWorkspace(workspace, "").ok).toBe(false);
  });
});
