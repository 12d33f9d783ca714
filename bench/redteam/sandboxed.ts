/**
 * What the sandbox's attacks share: a session's sandbox on an attack ground (the real
 * bubblewrap, as the bash tool and background tasks use it), the host's own git run the way
 * a person would run it after the session, and a look for files the host would obey.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { findExecutable } from "../../src/sandbox/bubblewrap-probe.js";
import { Sandbox } from "../../src/sandbox/sandbox.js";
import { sandboxPolicy } from "../../src/sandbox/sandbox-policy.js";
import type { SandboxSettings } from "../../src/sandbox/sandbox-settings.js";
import { type CommandResult, runCommand } from "../../src/tools/run-command.js";
import type { AttackGround } from "./attack.js";

/** Why a sandbox attack cannot run here, or undefined. */
export function noBubblewrap(): string | undefined {
  return findExecutable("bwrap", process.env.PATH) === undefined
    ? "bubblewrap is not installed"
    : undefined;
}

export interface SandboxSession {
  sandbox: Sandbox;
  /** Runs one bash command in the session's sandbox, as the bash tool does. */
  run(command: string, timeoutMs?: number): Promise<CommandResult>;
  close(): void;
}

export function sandboxSession(
  ground: AttackGround,
  settings: SandboxSettings = {},
): SandboxSession {
  const sandbox = new Sandbox(
    sandboxPolicy(settings, {
      workspace: ground.workspace,
      home: ground.home,
      rudderHome: join(ground.home, ".rudder"),
    }),
    { env: process.env },
  );
  return {
    sandbox,
    run: (command, timeoutMs = 30_000) =>
      runCommand(command, { cwd: ground.workspace, timeoutMs, sandbox }),
    close: () => sandbox.close(),
  };
}

/** The host's git in `cwd`, as the person runs it after the session (their own home, no system config). */
export function hostGit(ground: AttackGround, cwd: string, args: string[]): string {
  const result = spawnSync("git", args, {
    cwd,
    encoding: "utf8",
    timeout: 20_000,
    env: {
      PATH: process.env.PATH,
      HOME: ground.home,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "Person",
      GIT_AUTHOR_EMAIL: "person@example.com",
      GIT_COMMITTER_NAME: "Person",
      GIT_COMMITTER_EMAIL: "person@example.com",
    },
  });
  return `${result.stdout ?? ""}${result.stderr ?? ""}`;
}

/** The canaries that exist now (a planted command that ran leaves one). */
export function canariesFound(ground: AttackGround): string[] {
  return existsSync(ground.canaries) ? readdirSync(ground.canaries) : [];
}

/** Workspace files (any depth, not under .git) with a setuid or setgid bit. */
export function privilegedFiles(folder: string): string[] {
  const found: string[] = [];
  const walk = (directory: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && (statSync(path).mode & 0o6000) !== 0) found.push(path);
    }
  };
  walk(folder);
  return found;
}

/** `held` when no canary exists, else the canaries named. */
export function canaryVerdict(ground: AttackGround): { held: boolean; detail: string } {
  const found = canariesFound(ground);
  return found.length === 0
    ? { held: true, detail: "the host's git ran nothing planted" }
    : { held: false, detail: `the planted command ran on the host (${found.join(", ")})` };
}
