/**
 * git as a child process for the gateway's worktrees: its own process group (killed whole on
 * timeout or abort), stdin closed, stdout kept up to a bound and stderr drained into a tail. No
 * repository hook runs (`core.hooksPath` is /dev/null): making or removing a worktree must not
 * run code that a repository, or an agent working in it, configured. Never rejects: a failure
 * to start is exit code -1 with the reason as stderr.
 */
import { spawn } from "node:child_process";

export interface GitOutcome {
  /** The exit code; -1 when git could not start or was killed. */
  code: number;
  stdout: string;
  /** Its last 4 KiB. */
  stderr: string;
}

const MAX_STDOUT = 4 * 1024 * 1024;
const MAX_STDERR = 4096;

export interface RunGitOptions {
  cwd: string;
  /** Default 30 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export function runGit(args: readonly string[], options: RunGitOptions): Promise<GitOutcome> {
  return new Promise((resolve) => {
    const child = spawn("git", ["-c", "core.hooksPath=/dev/null", ...args], {
      cwd: options.cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" },
    });
    let stdout = "";
    let stderr = "";
    let settled = false;
    const finish = (code: number, extra = ""): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", kill);
      resolve({ code, stdout, stderr: `${stderr}${extra}`.slice(-MAX_STDERR) });
    };
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone already.
      }
    };
    const timer = setTimeout(() => {
      kill();
      finish(-1, `git ${args[0] ?? ""} took longer than ${options.timeoutMs ?? 30_000} ms`);
    }, options.timeoutMs ?? 30_000);
    timer.unref();
    options.signal?.addEventListener("abort", kill, { once: true });
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (stdout.length < MAX_STDOUT) stdout += chunk;
    });
    child.stderr.on("data", (chunk: string) => {
      stderr = `${stderr}${chunk}`.slice(-MAX_STDERR);
    });
    child.on("error", (error) => finish(-1, error.message));
    child.on("close", (code) => finish(code ?? -1));
  });
}
