/**
 * What the worktree-per-channel tests share: a binding that gives every `web:` channel a git
 * worktree of its own from `repository`, and git run in that repository as a fixed author.
 */
import { spawnSync } from "node:child_process";
import { GatewayBindings } from "../../src/gateway/bindings/bindings.js";

/** Every `web:*` channel isolated in a worktree of `repository` (engine `claude`). */
export function isolatedWorktreeBindings(repository: string, hash = ""): GatewayBindings {
  return new GatewayBindings(
    {
      file: "gateway.json",
      config: { bindings: [{ name: "isolated", match: ["web:*"], isolation: "worktree" }] },
      hash,
    },
    { cwd: repository, engine: "claude" },
  );
}

/** Runs git in `repository` as author and committer `p <p@h>`; returns what it printed. */
export function gitIn(repository: string, ...args: string[]): string {
  const result = spawnSync("git", args, {
    cwd: repository,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "p",
      GIT_AUTHOR_EMAIL: "p@h",
      GIT_COMMITTER_NAME: "p",
      GIT_COMMITTER_EMAIL: "p@h",
    },
  });
  return `${result.stdout}${result.stderr}`;
}
