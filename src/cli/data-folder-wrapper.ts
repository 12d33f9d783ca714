/**
 * Claude Code, as `rudder serve --engine claude` runs it, does not know the gateway's data
 * folder (its token, `gateway.db` with every channel's conversation) and would let its Bash and
 * Read tools read it. So the gateway starts it inside bubblewrap with that folder covered by an
 * empty read-only tmpfs and everything else as on the host (`--dev-bind / /`: Claude Code's
 * settings, its own sandbox and the workspace work as before), dying with the gateway. A rudder
 * agent needs none of this: its own sandbox hides the folder it is told of.
 * Where bubblewrap is missing or cannot start here (tried once, as `rudder serve` starts), the
 * agents run as before and `reason` says so, for a line at start.
 */
import { spawnSync } from "node:child_process";
import { findExecutable } from "../sandbox/bubblewrap-probe.js";

export type DataFolderWrapper =
  | { kind: "wrapped"; bin: string; args: string[] }
  | { kind: "unavailable"; reason: string };

const tried = new Map<string, string | undefined>();

/** How to start a program with `dataDir` hidden: bubblewrap's path and its arguments before the program. */
export function dataFolderWrapper(dataDir: string, env: NodeJS.ProcessEnv): DataFolderWrapper {
  // Opt-in for now: under bubblewrap's supervisor a SIGTERM to the agent's group ends bwrap
  // at once and its --die-with-parent kills Claude Code without its grace, and a gateway killed
  // mid-tool can leave the agent's tool behind (test/cli/serve-agent-death, serve-shutdown-health).
  if (env.RUDDER_HIDE_DATA_FROM_CLAUDE !== "1") {
    return {
      kind: "unavailable",
      reason: "hiding it needs RUDDER_HIDE_DATA_FROM_CLAUDE=1 (bubblewrap around Claude Code)",
    };
  }
  const bin = findExecutable("bwrap", env.PATH);
  if (bin === undefined)
    return { kind: "unavailable", reason: "bubblewrap (bwrap) is not installed" };
  const args = ["--dev-bind", "/", "/", "--tmpfs", dataDir, "--remount-ro", dataDir];
  args.push("--die-with-parent", "--");
  const key = `${bin}\0${dataDir}`;
  if (!tried.has(key)) {
    const probe = spawnSync(bin, [...args, "true"], {
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 10_000,
    });
    const failure =
      probe.error?.message ??
      (probe.status === 0
        ? undefined
        : probe.stderr.toString("utf8").trim() || `exit status ${probe.status}`);
    tried.set(key, failure);
  }
  const failure = tried.get(key);
  if (failure !== undefined) {
    return { kind: "unavailable", reason: `bubblewrap cannot start here: ${failure}` };
  }
  return { kind: "wrapped", bin, args };
}
