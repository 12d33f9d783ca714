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
 * and SIGKILL what was left. So the monitor starts with SIGTERM ignored, and the SIGTERM sent to
 * the agent's process group reaches Claude Code alone (in that group, its disposition set back
 * to the default by `env --default-signal` before it starts); the monitor ends when Claude Code
 * does, or with the group's SIGKILL after the grace. The gateway's death is seen by a watcher in
 * the group (`owned`, src/sandbox/owned-command.ts): SIGTERM to the group, then SIGKILL once the
 * monitor is gone or after the grace. A parent-death signal on bubblewrap (as before) left a
 * stray when it fired after bubblewrap armed it and before it released Claude Code's process
 * (bubblewrap #633: that process then waits for the release forever); the watcher's SIGKILL
 * reaches it. Claude Code keeps its own parent-death SIGTERM (`setpriv`), for a monitor killed
 * by something else.
 * Where bubblewrap, `env` or `setpriv` is missing or it cannot start here (tried once, as
 * `rudder serve` starts, owned the same way), the agents run as before and `reason` says so,
 * for a line at start.
 */
import { accessSync, constants } from "node:fs";
import type { OwnedStart } from "../claude-cli/spawned-child.js";
import { findExecutable, probeBubblewrap } from "../sandbox/bubblewrap-probe.js";

export type DataFolderWrapper =
  | { kind: "wrapped"; bin: string; args: string[]; owned: OwnedStart }
  | { kind: "unavailable"; reason: string };

const tried = new Map<string, Promise<string | undefined>>();

/** coreutils' `env` (its `--default-signal`, 8.31 and later). */
const ENV = "/usr/bin/env";
/** util-linux's `setpriv`, which sets the parent-death signal and execs. */
const SETPRIV = "/usr/bin/setpriv";

/** How the wrapped agent is owned: the monitor ignores SIGTERM, and Claude Code's grace. */
const OWNED: OwnedStart = { ignoreTerm: true, graceMs: 2000 };

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * How to start a program with `dataDir` hidden: bubblewrap's path, its arguments before the
 * program, and how the start is owned (`SpawnOptions.owned`); not yet tried here (see
 * `dataFolderWrapper`).
 */
export function dataFolderCommand(dataDir: string, env: NodeJS.ProcessEnv): DataFolderWrapper {
  if (env.RUDDER_HIDE_DATA_FROM_CLAUDE === "0") {
    return { kind: "unavailable", reason: "RUDDER_HIDE_DATA_FROM_CLAUDE=0 turns hiding it off" };
  }
  const bwrap = findExecutable("bwrap", env.PATH);
  if (bwrap === undefined)
    return { kind: "unavailable", reason: "bubblewrap (bwrap) is not installed" };
  if (!isExecutable(ENV) || !isExecutable(SETPRIV)) {
    return { kind: "unavailable", reason: `${ENV} or ${SETPRIV} is missing` };
  }
  const args = [
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
  return { kind: "wrapped", bin: bwrap, args, owned: OWNED };
}

/** `dataFolderCommand`, once bubblewrap has been tried with it (once per folder) and started. */
export async function dataFolderWrapper(
  dataDir: string,
  env: NodeJS.ProcessEnv,
): Promise<DataFolderWrapper> {
  const command = dataFolderCommand(dataDir, env);
  if (command.kind === "unavailable") return command;
  const key = `${command.bin}\0${dataDir}`;
  let probe = tried.get(key);
  if (probe === undefined) {
    probe = probeBubblewrap(command.bin, [...command.args, "true"]).then((result) =>
      result.ok ? undefined : result.reason,
    );
    tried.set(key, probe);
  }
  const failure = await probe;
  if (failure !== undefined) {
    return { kind: "unavailable", reason: `bubblewrap cannot start here: ${failure}` };
  }
  return command;
}
