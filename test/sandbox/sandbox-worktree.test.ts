/**
 * A workspace that is a linked git worktree (what a gateway channel with `"isolation":
 * "worktree"` works in), with the real bubblewrap: git works there (add, commit, status, log),
 * writing the repository's objects, refs and logs and the worktree's own git directory, while
 * the walls of issue 26 hold: the worktree's control files (`commondir`, `gitdir`), the `.git`
 * file and the repository's config and hooks stay read-only, and a `config.worktree` planted in
 * the worktree's git directory is put back.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  hostGit,
  SANDBOX_GIT_IDENTITY as IDENTITY,
  NO_BUBBLEWRAP,
  type SandboxFixture,
  sandboxFixture,
} from "./sandbox-helpers.js";

let fixture: SandboxFixture | undefined;
afterEach(() => {
  fixture?.cleanup();
  fixture = undefined;
});

describe.skipIf(NO_BUBBLEWRAP !== undefined)(`a linked worktree ${NO_BUBBLEWRAP ?? ""}`, () => {
  it("commits from the sandbox while control files stay read-only", async () => {
    fixture = sandboxFixture();
    const { workspace, outside, run } = fixture;
    // Outside /tmp, as a person's checkout is (the sandbox's /tmp is a private one).
    const repository = join(outside, "repo");
    mkdirSync(repository);
    hostGit(fixture, repository, "init", "-q", "-b", "main");
    writeFileSync(join(repository, "README.md"), "hello\n");
    hostGit(fixture, repository, "add", ".");
    hostGit(fixture, repository, "commit", "-qm", "first");
    // The fixture's workspace becomes the worktree (an empty folder git may fill).
    hostGit(fixture, repository, "worktree", "add", "-q", "-b", "rudder/chat", workspace);
    const gitDirectory = join(repository, ".git", "worktrees", "work");
    expect(existsSync(join(gitDirectory, "commondir"))).toBe(true);

    const work = await run(
      `${IDENTITY}echo change > README.md && echo new > added && git add -A && ` +
        "git commit -qm agent && git status --porcelain | wc -l && git log --oneline | wc -l",
    );
    expect(work.output).not.toContain("[sandbox]");
    expect(work.exitCode).toBe(0);
    expect(work.output.trim().split("\n")).toEqual(["0", "2"]);
    expect(hostGit(fixture, repository, "log", "--oneline", "rudder/chat")).toContain("agent");

    const monitor = `[core]\\n\\tfsmonitor = \\"touch ${outside}/canary-worktree\\"\\n`;
    const attack = await run(
      [
        `echo ${outside} > ${gitDirectory}/commondir; echo commondir=$?`,
        `echo gitdir: /elsewhere > .git; echo dotgit=$?`,
        `printf "${monitor}" >> ${repository}/.git/config; echo config=$?`,
        `echo 'touch x' > ${repository}/.git/hooks/pre-commit; echo hook=$?`,
        `printf "${monitor}" > ${gitDirectory}/config.worktree; echo planted`,
      ].join("; "),
    );
    expect(attack.output).toContain("commondir=1");
    expect(attack.output).toContain("dotgit=1");
    expect(attack.output).toContain("config=1");
    expect(attack.output).toContain("hook=1");
    expect(attack.output).toMatch(/\[sandbox\].*put back: .*config\.worktree/);
    expect(existsSync(join(gitDirectory, "config.worktree"))).toBe(false);
    hostGit(fixture, workspace, "status");
    hostGit(fixture, workspace, "commit", "-q", "--allow-empty", "-m", "person");
    expect(readdirSync(outside).filter((name) => name.startsWith("canary"))).toEqual([]);
  });
});
