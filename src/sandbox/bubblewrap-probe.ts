import { accessSync, constants } from "node:fs";
import { delimiter } from "node:path";
import { childProcess } from "./child-process.js";
import { ownedCommand, watchOwned } from "./owned-command.js";

/** The first executable `name` on `PATH`, or undefined. A few `access` calls: cheap enough for start-up. */
export function findExecutable(name: string, path: string | undefined): string | undefined {
  for (const folder of (path ?? "").split(delimiter)) {
    if (folder === "") continue;
    // Concatenated, not joined: each `join` normalizes, and start-up pays for every PATH entry.
    const candidate = folder.endsWith("/") ? `${folder}${name}` : `${folder}/${name}`;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

export type ProbeResult = { ok: true } | { ok: false; reason: string };

/** The namespaces the sandbox needs, tried on `true`. */
const PROBE_ARGS = [
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--unshare-net",
  "--unshare-pid",
  "--die-with-parent",
  "--",
  "true",
];

/** The probe's descriptor for its watcher's pipe (`ownedCommand`). */
const WATCHER_FD = 3;

/**
 * Whether bubblewrap can start a sandbox here (it cannot in a container
 * without user namespaces, for one): one run of `true` inside, or bubblewrap
 * with `args` (another sandbox's arguments, ending with the program to try).
 * Resolves with bubblewrap's own first line of complaint when it cannot.
 * Never rejects. Owned like a sandbox: its own process group, SIGKILLed when
 * rudder dies (mid-probe included) and once bubblewrap has exited.
 */
export function probeBubblewrap(
  file: string,
  args: readonly string[] = PROBE_ARGS,
): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let stderr = "";
    const [shell, shellArgs] = ownedCommand(file, args, WATCHER_FD);
    const child = childProcess().spawn(shell, shellArgs, {
      detached: true,
      stdio: ["ignore", "ignore", "pipe", "pipe"],
    });
    watchOwned(child, WATCHER_FD);
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    child.on("error", (error) => resolve({ ok: false, reason: error.message }));
    child.on("close", (code, signal) => {
      if (code === 0) {
        resolve({ ok: true });
        return;
      }
      const line = stderr.trim().split("\n")[0] ?? "";
      const status = signal === null ? `exit status ${code}` : `killed by ${signal}`;
      resolve({ ok: false, reason: line === "" ? status : line });
    });
  });
}
