import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findExecutable } from "../../src/sandbox/bubblewrap-probe.js";
import { Sandbox, type SandboxOptions } from "../../src/sandbox/sandbox.js";
import { sandboxPolicy } from "../../src/sandbox/sandbox-policy.js";
import type { SandboxSettings } from "../../src/sandbox/sandbox-settings.js";
import { type CommandResult, runCommand } from "../../src/tools/run-command.js";

/** Why the sandbox tests are skipped, or undefined when bubblewrap is here (ensure-test-deps installs it). */
export const NO_BUBBLEWRAP =
  findExecutable("bwrap", process.env.PATH) === undefined
    ? "bubblewrap (bwrap) is not installed: run scripts/ensure-test-deps.sh"
    : undefined;

export interface SandboxFixture {
  root: string;
  workspace: string;
  home: string;
  /** A folder outside both the workspace and /tmp, so a write there meets the read-only root. */
  outside: string;
  sandbox: Sandbox;
  run(command: string, timeoutMs?: number): Promise<CommandResult>;
  cleanup(): void;
}

/**
 * A workspace (under /tmp, as in most tests), a folder outside it and /tmp
 * (under /var/tmp: /tmp inside the sandbox is its private one) with a home
 * in it, and a sandbox for the workspace.
 */
export function sandboxFixture(
  settings: SandboxSettings = {},
  options: Omit<SandboxOptions, "env"> = {},
): SandboxFixture {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-sandbox-test-")));
  const workspace = join(root, "work");
  mkdirSync(workspace);
  const outside = realpathSync(mkdtempSync("/var/tmp/rudder-sandbox-outside-"));
  const home = join(outside, "home");
  mkdirSync(home);
  const sandbox = new Sandbox(
    sandboxPolicy(settings, { workspace, home, rudderHome: join(home, ".rudder") }),
    { env: process.env, ...options },
  );
  return {
    root,
    workspace,
    home,
    outside,
    sandbox,
    run: (command, timeoutMs = 20_000) =>
      runCommand(command, { cwd: workspace, timeoutMs, sandbox }),
    cleanup() {
      sandbox.close();
      rmSync(root, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    },
  };
}

/** Exported at the start of a sandboxed command that commits: who the agent's commits are by. */
export const SANDBOX_GIT_IDENTITY =
  "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b; ";

/** The person's git on the host, with the fixture's home and no system config: its output. */
export function hostGit(fixture: SandboxFixture, cwd: string, ...args: string[]): string {
  const result = spawnSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      HOME: fixture.home,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "p",
      GIT_AUTHOR_EMAIL: "p@h",
      GIT_COMMITTER_NAME: "p",
      GIT_COMMITTER_EMAIL: "p@h",
    },
  });
  return `${result.stdout}${result.stderr}`;
}
