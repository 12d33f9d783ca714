import { accessSync, constants } from "node:fs";

/** util-linux's `setpriv` (Debian's essential `util-linux`), which sets it and then execs. */
const SETPRIV = "/usr/bin/setpriv";
/** What `setpriv` prints, and exits 127 with, when it cannot exec the command. */
const EXEC_FAILED = /^setpriv: failed to execute (.*): (.*)$/;

let setpriv: boolean | undefined;

/**
 * The command with Linux's parent-death signal set for the process it becomes: SIGTERM when
 * the gateway dies, however it dies (SIGKILL, a crash, the OOM killer), so that an agent does
 * not go on answering, for no one, the messages it had queued (each of which the next start runs
 * again, tools and all). SIGTERM lets the agent stop its own tools. `setpriv` execs the command in
 * place, so the pid, the process group and the stdio are the child's own. Elsewhere (no
 * `setpriv`: macOS, a minimal image), the command as given: the agent ends when its stdin does.
 */
export function withParentDeathSignal(command: readonly string[]): readonly string[] {
  setpriv ??= hasSetpriv();
  return setpriv ? [SETPRIV, "--pdeathsig", "TERM", "--", ...command] : command;
}

function hasSetpriv(): boolean {
  if (process.platform !== "linux") return false;
  try {
    accessSync(SETPRIV, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The start failure `setpriv` reported (exit 127 and its one line), as the error Node's spawn
 * gives when it cannot start a binary itself (`spawn claude ENOENT`); undefined otherwise.
 */
export function execFailure(code: number | null, stderr: readonly string[]): Error | undefined {
  if (code !== 127) return undefined;
  for (const line of stderr) {
    const failed = EXEC_FAILED.exec(line);
    if (!failed) continue;
    const [, binary, reason] = failed;
    const errno = /no such file/i.test(reason ?? "")
      ? "ENOENT"
      : /permission denied/i.test(reason ?? "")
        ? "EACCES"
        : reason;
    return Object.assign(new Error(`spawn ${binary} ${errno}`), { code: errno });
  }
  return undefined;
}
