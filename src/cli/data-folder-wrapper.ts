/**
 * Claude Code, as `rudder serve --engine claude` runs it, does not know the gateway's data
 * folder (its token, `gateway.db` with every channel's conversation) and would let its Bash and
 * Read tools read it. So the gateway starts it inside bubblewrap with that folder covered by an
 * empty read-only tmpfs and everything else as on the host (`--dev-bind / /`: Claude Code's
 * settings, its own sandbox and the workspace work as before). A rudder agent needs none of
 * this: its own sandbox hides the folder it is told of. `RUDDER_HIDE_DATA_FROM_CLAUDE=0` opts out.
 *
 * Signals, so that a stop gives Claude Code its grace and a gateway's death leaves nothing
 * running, as without the wrapper: bubblewrap stays in front as a monitor that waits for its
 * child, and dies at once of a SIGTERM, which made the gateway take Claude Code's stop for done
 * and SIGKILL what was left (with `--die-with-parent`, the monitor's death SIGKILLed Claude Code
 * itself, and its running tool was left behind). So the monitor ignores SIGTERM (`env
 * --ignore-signal`), and the SIGTERM sent to the agent's process group reaches Claude Code
 * alone (in that group, its disposition set back to the default before it starts); the
 * monitor ends when Claude Code does, or with the group's SIGKILL after the grace. The gateway's
 * death SIGKILLs the monitor (its parent-death signal made SIGKILL, since it ignores SIGTERM),
 * and the monitor's death sends Claude Code SIGTERM (its own parent-death signal), which stops
 * its tools as when it runs unwrapped.
 * Where bubblewrap, `env` or `setpriv` is missing or it cannot start here (tried once, as
 * `rudder serve` starts), the agents run as before and `reason` says so, for a line at start.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { findExecutable } from "../sandbox/bubblewrap-probe.js";

export type DataFolderWrapper =
  | { kind: "wrapped"; bin: string; args: string[] }
  | { kind: "unavailable"; reason: string };

const tried = new Map<string, string | undefined>();

/** coreutils' `env` (its `--ignore-signal` and `--default-signal`, 8.31 and later). */
const ENV = "/usr/bin/env";
/** util-linux's `setpriv`, which sets the parent-death signal and execs. */
const SETPRIV = "/usr/bin/setpriv";

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** How to start a program with `dataDir` hidden: bubblewrap's path and its arguments before the program. */
export function dataFolderWrapper(dataDir: string, env: NodeJS.ProcessEnv): DataFolderWrapper {
  if (env.RUDDER_HIDE_DATA_FROM_CLAUDE === "0") {
    return { kind: "unavailable", reason: "RUDDER_HIDE_DATA_FROM_CLAUDE=0 turns hiding it off" };
  }
  const bwrap = findExecutable("bwrap", env.PATH);
  if (bwrap === undefined)
    return { kind: "unavailable", reason: "bubblewrap (bwrap) is not installed" };
  if (!isExecutable(ENV) || !isExecutable(SETPRIV)) {
    return { kind: "unavailable", reason: `${ENV} or ${SETPRIV} is missing` };
  }
  const bin = ENV;
  const args = [
    "--ignore-signal=TERM",
    SETPRIV,
    "--pdeathsig",
    "KILL",
    "--",
    bwrap,
    "--dev-bind",
    "/",
    "/",
    "--tmpfs",
    dataDir,
    "--remount-ro",
    dataDir,
    "--",
    ENV,
    "--default-signal=TERM",
    SETPRIV,
    "--pdeathsig",
    "TERM",
    "--",
  ];
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
