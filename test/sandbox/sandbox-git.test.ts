/**
 * Nothing written inside the sandbox runs outside it (issue 26, point 1), with the real
 * bubblewrap: git's control files of every repository in the workspace, the core.hooksPath
 * folder and auto-run files cannot be planted from sandboxed bash (read-only mounts, and the
 * check after each command puts back what slipped, with a note), while ordinary git work
 * (init, add, commit, branch, checkout -b, merge) goes on. The person's own git runs after
 * each attack, and a canary outside the workspace and /tmp says whether anything planted ran.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BackgroundManager } from "../../src/background/background-manager.js";
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

function repository(fixture: SandboxFixture): void {
  hostGit(fixture, fixture.workspace, "init", "-q");
  writeFileSync(join(fixture.workspace, "README.md"), "hello\n");
  hostGit(fixture, fixture.workspace, "add", ".");
  hostGit(fixture, fixture.workspace, "commit", "-qm", "first");
}

const canaries = (fixture: SandboxFixture): string[] =>
  readdirSync(fixture.outside).filter((name) => name.startsWith("canary"));

describe.skipIf(NO_BUBBLEWRAP !== undefined)(`git in the sandbox ${NO_BUBBLEWRAP ?? ""}`, () => {
  it("keeps ordinary work going: init, add, commit, branch, checkout -b, merge", async () => {
    fixture = sandboxFixture();
    const { run, workspace } = fixture;
    const first = await run(
      `${IDENTITY}git init -q -b main && echo a > a && git add a && git commit -qm one && echo done`,
    );
    expect(first.output).toContain("done");
    expect(first.output).not.toContain("[sandbox]");
    const second = await run(
      `${IDENTITY}git checkout -qb feature && echo b > b && git add b && git commit -qm two && ` +
        "git checkout -q main && git merge -q feature && git branch -q topic && git tag v1 && git log --oneline | wc -l",
    );
    expect(second.exitCode).toBe(0);
    expect(second.output.trim().split("\n")[0]).toBe("2");
    expect(second.output).not.toContain("[sandbox]");
    expect(hostGit(fixture, workspace, "branch")).toMatch(/feature[\s\S]*main[\s\S]*topic/);
  });

  it("a new repository keeps only config keys that run nothing", async () => {
    fixture = sandboxFixture();
    const { run, workspace, outside } = fixture;
    const result = await run(
      `git init -q && git config core.fsmonitor "touch ${outside}/canary-init" && ` +
        `git config alias.st status && git config user.name agent && echo made`,
    );
    expect(result.output).toContain("made");
    expect(result.output).toMatch(
      /\[sandbox\].*\.git\/config \(without core\.fsmonitor, alias\.st\)/,
    );
    const config = readFileSync(join(workspace, ".git", "config"), "utf8");
    expect(config).not.toContain("fsmonitor");
    expect(config).toContain("agent");
    hostGit(fixture, workspace, "status");
    expect(canaries(fixture)).toEqual([]);
  });

  it("refuses .git swapped away, and puts back commondir, config.worktree and new hooks", async () => {
    fixture = sandboxFixture();
    repository(fixture);
    const { run, workspace, outside } = fixture;
    const monitor = `[core]\\n\\tfsmonitor = \\"touch ${outside}/canary-planted\\"\\n`;
    const result = await run(
      [
        "mv .git .git-old; echo mv=$?",
        `printf "${monitor}" > .git/config; echo config=$?`,
        `mkdir -p evil && cp -r .git/objects .git/refs evil/ && printf "${monitor}" > evil/config && echo ../evil > .git/commondir`,
        `printf "${monitor}" > .git/config.worktree`,
        "echo 'touch x' > .git/hooks/pre-commit; echo hook=$?",
      ].join("; "),
    );
    expect(result.output).toContain("mv=1");
    expect(result.output).toMatch(/config=1/);
    expect(result.output).toMatch(/hook=1/);
    expect(result.output).toMatch(/\[sandbox\].*put back: .*\.git\/commondir/);
    expect(existsSync(join(workspace, ".git", "commondir"))).toBe(false);
    expect(existsSync(join(workspace, ".git", "config.worktree"))).toBe(false);
    hostGit(fixture, workspace, "status");
    hostGit(fixture, workspace, "commit", "-q", "--allow-empty", "-m", "x");
    expect(canaries(fixture)).toEqual([]);
  });

  it("guards the core.hooksPath folder and nested repositories", async () => {
    fixture = sandboxFixture();
    repository(fixture);
    const { run, workspace, outside } = fixture;
    mkdirSync(join(workspace, ".githooks"));
    hostGit(fixture, workspace, "config", "core.hooksPath", ".githooks");
    const result = await run(
      `printf '#!/bin/sh\\ntouch ${outside}/canary-hook\\n' > .githooks/pre-commit; chmod +x .githooks/pre-commit; ` +
        `mkdir -p lib/inner && cd lib/inner && git init -q && git config core.fsmonitor "touch ${outside}/canary-nested"`,
    );
    expect(result.output).toContain("Read-only file system");
    hostGit(fixture, workspace, "commit", "-q", "--allow-empty", "-m", "x");
    hostGit(fixture, join(workspace, "lib", "inner"), "status");
    expect(canaries(fixture)).toEqual([]);
  });

  it("puts back auto-run files a command creates, and keeps existing ones read-only", async () => {
    fixture = sandboxFixture();
    const { run, workspace } = fixture;
    mkdirSync(join(workspace, ".vscode"));
    writeFileSync(join(workspace, ".vscode", "tasks.json"), "{}\n");
    const result = await run(
      "echo planted > .vscode/tasks.json; echo tasks=$?; mkdir -p pkg .husky; " +
        "echo planted > .envrc; echo planted > pkg/.npmrc; echo planted > lefthook.yml; echo planted > .husky/pre-commit",
    );
    expect(result.output).toContain("tasks=1");
    expect(result.output).toMatch(/\[sandbox\].*put back: .*\.envrc/);
    expect(readFileSync(join(workspace, ".vscode", "tasks.json"), "utf8")).toBe("{}\n");
    for (const path of [".envrc", "pkg/.npmrc", "lefthook.yml", ".husky"]) {
      expect(existsSync(join(workspace, path)), path).toBe(false);
    }
    // Ordinary files next to them stay.
    expect(existsSync(join(workspace, "pkg"))).toBe(true);
  });
});

describe.skipIf(NO_BUBBLEWRAP !== undefined)(`a background task ${NO_BUBBLEWRAP ?? ""}`, () => {
  it("is checked too: what it plants is put back, and its output says so", async () => {
    fixture = sandboxFixture();
    repository(fixture);
    const { workspace, sandbox } = fixture;
    const background = new BackgroundManager({ workspace, sandbox });
    const ended = new Promise<void>((resolve) => background.onTaskEnd(() => resolve()));
    background.start("sleep 0.2; echo ../evil > .git/commondir; echo planted > .envrc");
    await ended;
    const [task] = background.collectFinished();
    expect(task?.output).toMatch(/\[sandbox\].*put back: .*\.envrc/);
    expect(existsSync(join(workspace, ".git", "commondir"))).toBe(false);
    expect(existsSync(join(workspace, ".envrc"))).toBe(false);
  });
});
