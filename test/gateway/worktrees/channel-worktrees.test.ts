/**
 * The channels' worktrees on a real repository (git as a child process): names valid as refs
 * and folders, a worktree at a place derived from the channel alone (so a new
 * `ChannelWorktrees`, as after a restart, finds it), its state, and removal that keeps an
 * unmerged branch. test/gateway/worktree-channels.test.ts has the rest through the gateway.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChannelWorktrees } from "../../../src/gateway/worktrees/channel-worktrees.js";
import { worktreeName } from "../../../src/gateway/worktrees/worktree-name.js";
import { gitIn } from "../worktree-fixture.js";

let root: string;
let repository: string;

const worktrees = () =>
  new ChannelWorktrees({
    isolatedFolder: (channelId) => (channelId.startsWith("plain") ? undefined : repository),
    root: join(root, "worktrees"),
  });

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "rudder-worktrees-"));
  repository = join(root, "project");
  mkdirSync(repository);
  gitIn(repository, "init", "-q", "-b", "main");
  writeFileSync(join(repository, "notes.txt"), "original\n");
  gitIn(repository, "add", ".");
  gitIn(repository, "commit", "-qm", "first");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("channel worktrees", () => {
  it("names every channel id as a valid ref and folder, distinct ids apart", () => {
    const ids = [
      "chat",
      "web:billing-1",
      "web-billing-1",
      "telegram:-100.5",
      "a..b",
      "x.lock",
      "-",
    ];
    const names = ids.map(worktreeName);
    expect(names[0]).toBe("chat");
    expect(new Set(names).size).toBe(ids.length);
    for (const name of names) {
      expect(name).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]*$/);
      const check = spawnSync("git", ["check-ref-format", `refs/heads/rudder/${name}`]);
      expect(check.status, name).toBe(0);
    }
  });

  it("finds a worktree again from the channel alone, tells its state, keeps an unmerged branch", async () => {
    const channels = worktrees();
    expect(channels.place("plain:chat")).toBeUndefined();
    expect(await channels.prepare("web:one")).toBeUndefined();
    const one = channels.place("web:one");
    if (one === undefined) throw new Error("no place");
    expect(one.branch).toBe(`rudder/${worktreeName("web:one")}`);
    writeFileSync(join(one.cwd, "notes.txt"), "one's change\n");
    // A new instance (a restarted gateway) finds the same worktree, with the change in it.
    const again = worktrees();
    expect(again.place("web:one")?.path).toBe(one.path);
    expect(await again.prepare("web:one")).toBeUndefined();
    expect(readFileSync(join(one.cwd, "notes.txt"), "utf8")).toBe("one's change\n");
    expect(await again.status("web:one")).toMatchObject({ state: "dirty", changes: 1, ahead: 0 });
    gitIn(one.cwd, "commit", "-qam", "one");
    expect(await worktrees().status("web:one")).toMatchObject({ state: "clean", ahead: 1 });
    // Committed work main lacks: the worktree goes without asking, its branch stays.
    expect(await again.remove("web:one", false)).toMatchObject({ removed: true, branchKept: true });
    expect(existsSync(one.path)).toBe(false);
    expect(gitIn(repository, "branch", "--list", one.branch)).toContain("rudder/");
    expect(await again.remove("web:one", false)).toEqual({ removed: false, reason: "none" });
  });
});
