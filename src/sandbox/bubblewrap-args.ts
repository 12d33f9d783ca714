import { realpathSync, statSync } from "node:fs";
import { relative } from "node:path";
import { BRIDGE_PORT, BRIDGE_SCRIPT, proxyEnvironment } from "./proxy-bridge.js";
import type { SandboxPolicy } from "./sandbox-policy.js";

export interface BubblewrapLayout {
  /** The host folder seen as `/tmp` inside (TMPDIR points there), shared by the session's commands. */
  privateTmp: string;
  /** Where the command starts (the workspace). */
  cwd: string;
  /**
   * With an allow-list of domains: rudder's proxy socket (host path; it is
   * bound inside) and node, which runs the bridge to it inside.
   */
  proxy?: { socketPath: string; node: string };
}

/** Where the proxy's socket is seen inside: in the hidden /run, or else in the private /tmp. */
const PROXY_SOCKET_IN_RUN = "/run/rudder-proxy.sock";
const PROXY_SOCKET_IN_TMP = "/tmp/.rudder-proxy.sock";

/**
 * The command's start inside. fd 3 is a pipe whose other end only the parent
 * holds: it reads as ready (end of file) once the parent is gone. If it
 * already is, nothing runs; otherwise a watchdog waits on it and, when the
 * parent dies, kills everything in the sandbox's PID namespace. So the
 * command dies with the parent even where bubblewrap's own die-with-parent
 * signals were not armed yet (they are set a moment after it starts).
 */
const START_IF_PARENT_LIVES =
  "read -t 0 -u 3 && exit 125; " +
  "{ read -r -u 3; kill -KILL -1; } </dev/null >/dev/null 2>&1 & " +
  'exec 3<&- && exec "$@"';

/** The descriptor the parent passes as the pipe of `START_IF_PARENT_LIVES`. */
export const PARENT_PIPE_FD = 3;

/** The environment variables a command inside never gets: the gateway's credentials. */
const UNSET_VARIABLES = ["RUDDER_TOKEN"];

type Existing = { kind: "dir" | "file"; real: string } | undefined;

function existing(path: string): Existing {
  try {
    const stats = statSync(path);
    return { kind: stats.isDirectory() ? "dir" : "file", real: realpathSync(path) };
  } catch {
    return undefined;
  }
}

function isWithin(path: string, folder: string): boolean {
  const rest = relative(folder, path);
  return rest === "" || (!rest.startsWith("..") && !rest.startsWith("/"));
}

/**
 * bubblewrap's arguments (without the program) for `bash -c command` under
 * `policy`: the whole filesystem read-only, a fresh `/dev` and `/proc`, the
 * private folder at `/tmp` (which also hides the host's `/tmp`, its unix
 * sockets among it), the workspace and `writable` paths writable, `readOnly`
 * and protected paths bound read-only over them, `hidden` paths replaced
 * by empty read-only ones (a hidden folder holding the workspace is left
 * visible, or the workspace would vanish), `/run` hidden with its sockets
 * unless unix sockets are allowed, the network namespace unshared unless the
 * network is open, its own PID namespace, and death with the parent.
 * Mounts apply in order, so later ones win. The caller passes a pipe as fd 3
 * (`PARENT_PIPE_FD`) and never writes to it.
 */
export function bubblewrapArgs(
  policy: SandboxPolicy,
  layout: BubblewrapLayout,
  command: string,
): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/dev/shm", "--proc", "/proc"];
  const workspace = policy.workspace;
  const replaceTmp = !isWithin("/tmp", workspace);
  if (replaceTmp) args.push("--bind", layout.privateTmp, "/tmp");
  const hideRun = !policy.allowAllUnixSockets && !isWithin(workspace, "/run");
  const proxySocket = hideRun ? PROXY_SOCKET_IN_RUN : PROXY_SOCKET_IN_TMP;
  if (layout.proxy !== undefined && !hideRun) {
    args.push("--bind", layout.proxy.socketPath, proxySocket);
  }
  if (hideRun) {
    args.push("--tmpfs", "/run");
    if (layout.proxy !== undefined) args.push("--bind", layout.proxy.socketPath, proxySocket);
    const resolver = existing("/etc/resolv.conf");
    if (resolver !== undefined && isWithin(resolver.real, "/run")) {
      args.push("--ro-bind", resolver.real, resolver.real);
    }
    for (const socket of policy.allowUnixSockets) {
      const found = existing(socket);
      if (found !== undefined) args.push("--bind", found.real, found.real);
    }
    args.push("--remount-ro", "/run");
  }
  args.push("--bind", workspace, workspace);
  for (const path of policy.writable) {
    const found = existing(path);
    if (found !== undefined) args.push("--bind", found.real, found.real);
  }
  for (const path of [...policy.readOnly, ...policy.protectedInWorkspace]) {
    const found = existing(path);
    if (found !== undefined) args.push("--ro-bind", found.real, found.real);
  }
  for (const path of policy.hidden) {
    const found = existing(path);
    if (found === undefined || isWithin(workspace, found.real)) continue;
    if (replaceTmp && isWithin(found.real, "/tmp")) continue;
    if (hideRun && isWithin(found.real, "/run")) continue;
    if (found.kind === "dir") args.push("--tmpfs", found.real, "--remount-ro", found.real);
    else args.push("--ro-bind", "/dev/null", found.real);
  }
  if (policy.network.kind !== "all") args.push("--unshare-net");
  args.push("--unshare-pid", "--unshare-ipc", "--die-with-parent", "--chdir", layout.cwd);
  args.push("--setenv", "TMPDIR", "/tmp");
  for (const name of UNSET_VARIABLES) args.push("--unsetenv", name);
  if (layout.proxy === undefined) {
    args.push("--", "bash", "-c", START_IF_PARENT_LIVES, "bash", "bash", "-c", command);
    return args;
  }
  for (const [name, value] of Object.entries(proxyEnvironment())) {
    args.push("--setenv", name, value);
  }
  args.push("--", "bash", "-c", START_IF_PARENT_LIVES, "bash", layout.proxy.node, "-e");
  args.push(BRIDGE_SCRIPT, proxySocket, String(BRIDGE_PORT), command);
  return args;
}
