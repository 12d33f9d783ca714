/**
 * The workspace guard on its own (no sandbox needed): what changes of the guarded paths while
 * a command runs is put back and kept in a quarantine folder; what a person changes between
 * commands stands; a new repository's config keeps only keys that run nothing.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WorkspaceGuard } from "../../src/sandbox/workspace-guard.js";
import { guardMounts, takeSnapshot } from "../../src/sandbox/workspace-snapshot.js";

let root: string | undefined;
afterEach(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function setUp(): { workspace: string; guard: WorkspaceGuard; quarantine: string } {
  root = realpathSync(mkdtempSync("/var/tmp/rudder-guard-test-"));
  const workspace = join(root, "work");
  const quarantine = join(root, "quarantine");
  mkdirSync(workspace);
  spawnSync("git", ["init", "-q", workspace]);
  return {
    workspace,
    guard: new WorkspaceGuard(workspace, { quarantineRoot: quarantine }),
    quarantine,
  };
}

describe("the workspace guard", () => {
  it("puts back what changed while a command ran and keeps what was written", () => {
    const { workspace, guard, quarantine } = setUp();
    const config = readFileSync(join(workspace, ".git", "config"), "utf8");
    guard.begin();
    writeFileSync(join(workspace, ".git", "config"), "[core]\n\tfsmonitor = touch x\n");
    writeFileSync(join(workspace, ".git", "commondir"), "../evil\n");
    mkdirSync(join(workspace, "lib"));
    writeFileSync(join(workspace, "lib", ".envrc"), "echo hi\n");
    writeFileSync(join(workspace, "ordinary.txt"), "kept\n");
    const note = guard.check(true);
    expect(note).toMatch(/put back: .*\.git\/commondir.*\.git\/config \(changed\).*lib\/\.envrc/);
    expect(readFileSync(join(workspace, ".git", "config"), "utf8")).toBe(config);
    expect(existsSync(join(workspace, ".git", "commondir"))).toBe(false);
    expect(existsSync(join(workspace, "lib", ".envrc"))).toBe(false);
    expect(readFileSync(join(workspace, "ordinary.txt"), "utf8")).toBe("kept\n");
    expect(note).toContain(quarantine);
  });

  it("lets a person's own change between commands stand", () => {
    const { workspace, guard } = setUp();
    guard.begin();
    expect(guard.check(true)).toBeUndefined();
    writeFileSync(join(workspace, ".envrc"), "export A=1\n");
    guard.begin();
    expect(guard.check(true)).toBeUndefined();
    expect(existsSync(join(workspace, ".envrc"))).toBe(true);
  });

  it("keeps a new repository with its config cut to keys that run nothing", () => {
    root = realpathSync(mkdtempSync("/var/tmp/rudder-guard-test-"));
    const workspace = join(root, "work");
    mkdirSync(workspace);
    const guard = new WorkspaceGuard(workspace, { quarantineRoot: join(root, "q") });
    guard.begin();
    spawnSync("git", ["init", "-q", workspace]);
    spawnSync("git", ["-C", workspace, "config", "core.pager", "touch x"]);
    spawnSync("git", ["-C", workspace, "config", "user.name", "agent"]);
    const note = guard.check(true);
    expect(note).toContain(".git/config (without core.pager)");
    const config = readFileSync(join(workspace, ".git", "config"), "utf8");
    expect(config).not.toContain("pager");
    expect(config).toContain('name = "agent"');
    expect(existsSync(join(workspace, ".git", "HEAD"))).toBe(true);
  });

  it("mounts each git directory over itself and its control entries read-only", () => {
    const { workspace } = setUp();
    const mounts = guardMounts(takeSnapshot(workspace));
    expect(mounts.bound).toEqual([join(workspace, ".git")]);
    expect(mounts.readOnly).toContain(join(workspace, ".git", "config"));
    expect(mounts.readOnly).toContain(join(workspace, ".git", "hooks"));
    expect(mounts.readOnly).not.toContain(join(workspace, ".git", "objects"));
  });
  it("lists again only folders that changed (or changed too near the last walk), and finds plants in them", () => {
    const { workspace } = setUp();
    mkdirSync(join(workspace, "a", "b", "c"), { recursive: true });
    const first = takeSnapshot(workspace);
    const folder = join(workspace, "a", "b");
    // Just made: too near the walk to trust its time, so listed again next time.
    expect(first.folders.get(folder)?.racy).toBe(true);
    // As if the folders had been made long before the walk: their listings are trusted.
    for (const listing of first.folders.values()) listing.racy = false;
    const second = takeSnapshot(workspace, undefined, first);
    expect(second.folders.get(folder)).toBe(first.folders.get(folder));
    // A plant deep down changes its folder's change time: listed again and found.
    writeFileSync(join(folder, ".envrc"), "echo planted\n");
    mkdirSync(join(workspace, "a", "b", "c", ".vscode"));
    const third = takeSnapshot(workspace, undefined, second);
    expect(third.folders.get(folder)).not.toBe(second.folders.get(folder));
    expect([...third.entries.keys()]).toEqual(
      expect.arrayContaining([join(folder, ".envrc"), join(folder, "c", ".vscode")]),
    );
    // Within the racy window a folder is listed again even with the same change time.
    writeFileSync(join(workspace, ".envrc"), "echo planted\n");
    const racy = takeSnapshot(workspace);
    rmSync(join(workspace, ".envrc"));
    writeFileSync(join(workspace, ".npmrc"), "x\n");
    expect(takeSnapshot(workspace, undefined, racy).entries.has(join(workspace, ".npmrc"))).toBe(
      true,
    );
  });
  it("removes what slipped when it cannot keep it (a quarantine folder it cannot make)", () => {
    const { workspace } = setUp();
    const blocked = join(workspace, "..", "not-a-folder");
    writeFileSync(blocked, "a file where the quarantine folder would go\n");
    const guard = new WorkspaceGuard(workspace, { quarantineRoot: join(blocked, "q") });
    guard.begin();
    writeFileSync(join(workspace, ".envrc"), "echo planted\n");
    const note = guard.check(true);
    expect(note).toContain("could not be kept and was removed");
    expect(existsSync(join(workspace, ".envrc"))).toBe(false);
  });
});
