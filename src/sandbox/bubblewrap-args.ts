import { realpathSync, statSync } from "node:fs";
import { PERL_RUNNER_SCRIPT } from "./perl-runner-script.js";
import { BRIDGE_PORT } from "./proxy-bridge.js";
import { NODE_RUNNER_SCRIPT } from "./runner-script.js";
import type { SandboxPolicy } from "./sandbox-policy.js";
import { filtersUnixSockets, unixSocketFilterArgs } from "./unix-socket-filter.js";

/** The runner's interpreter: which one, and its path (visible inside, as `/` is). */
export interface RunnerProgram {
  kind: "perl" | "node";
  path: string;
}

export interface BubblewrapLayout {
  /** The host folder seen as `/tmp` inside (TMPDIR points there), shared by the session's commands. */
  privateTmp: string;
  /** What runs the runner inside: perl (`PERL_RUNNER_SCRIPT`) or, without it, node (`NODE_RUNNER_SCRIPT`). */
  runner: RunnerProgram;
  /** The runner's grace period between SIGTERM and SIGKILL of a command's group. */
  graceMs: number;
  /** The most processes the sandbox's user may have inside (`ulimit -u`; not enforced for root). */
  maxProcesses: number;
  /** With an allow-list of domains: rudder's proxy socket (host path; it is bound inside). */
  proxySocket?: string;
  /**
   * Git directories to bind over themselves (so they cannot be renamed away) and the paths
   * that run code outside the sandbox, kept read-only (`guardMounts`).
   */
  guarded?: { bound: string[]; readOnly: string[] };
  /** The descriptor bubblewrap reads the privilege filter from (privilege-filter.ts), when there is one. */
  privilegeFilterFd?: number;
  /**
   * The descriptor bubblewrap reads the unix-socket filter from, for the node runner: it cannot
   * install the filter on each command as perl's does, so the whole sandbox, runner included,
   * runs under it (its bridge to the proxy takes sockets rudder sends it instead).
   */
  unixSocketFilterFd?: number;
}

/** Where the proxy's socket is seen inside: in the hidden /run, or else in the private /tmp. */
const PROXY_SOCKET_IN_RUN = "/run/rudder-proxy.sock";
const PROXY_SOCKET_IN_TMP = "/tmp/.rudder-proxy.sock";

/**
 * Caps the processes inside, fork bombs the deny list cannot see included: in
 * the sandbox's own user namespace the count is of its processes alone. The
 * kernel does not apply it to root; there the sandbox's cgroup does (`Sandbox`).
 */
const LIMIT_PROCESSES = 'ulimit -u "$1" 2>/dev/null; shift; exec "$@"';

type Existing = { kind: "dir" | "file"; real: string } | undefined;

function existing(path: string): Existing {
  try {
    const stats = statSync(path);
    // The C library's realpath: the same answer without JavaScript path work per component.
    return { kind: stats.isDirectory() ? "dir" : "file", real: realpathSync.native(path) };
  } catch {
    return undefined;
  }
}

/**
 * Whether `path` is `folder` or below it. Both are absolute and normalized here (real paths,
 * the resolved workspace, constants), so comparing strings is exact, and it spares start-up the
 * two `resolve` calls `relative` would make each time.
 */
function isWithin(path: string, folder: string): boolean {
  if (path === folder) return true;
  return path.startsWith(folder.endsWith("/") ? folder : `${folder}/`);
}

/**
 * bubblewrap's arguments (without the program) for a session's sandbox under
 * `policy`, whose command is the runner (runner-script.ts) that starts each
 * bash command inside: the whole filesystem read-only, a fresh `/dev` and `/proc`, the
 * private folder at `/tmp` (which also hides the host's `/tmp`, its unix
 * sockets among it), the workspace and `writable` paths writable, `readOnly`
 * and protected paths bound read-only over them, `hidden` paths replaced
 * by empty read-only ones (a hidden folder holding the workspace too, with
 * the workspace alone bound back into it), `/run` hidden with its sockets
 * unless unix sockets are allowed, the network namespace unshared unless the
 * network is open, its own PID namespace, no capabilities, no setuid or
 * setgid bit (the privilege filter), a process limit, and death with the parent.
 * Mounts apply in order, so later ones win. Paths are looked up now: the
 * same arguments mean the same confinement, which is how a running sandbox
 * is known to still fit (`Sandbox`).
 */
export function bubblewrapArgs(policy: SandboxPolicy, layout: BubblewrapLayout): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/dev/shm", "--proc", "/proc"];
  const workspace = policy.workspace;
  const replaceTmp = !isWithin("/tmp", workspace);
  if (replaceTmp) args.push("--bind", layout.privateTmp, "/tmp");
  const hideRun = !policy.allowAllUnixSockets && !isWithin(workspace, "/run");
  const proxySocket = hideRun ? PROXY_SOCKET_IN_RUN : PROXY_SOCKET_IN_TMP;
  // The node runner's bridge takes its connections to the proxy from rudder: no socket inside.
  const perl = layout.runner.kind === "perl";
  const bindProxy = perl && layout.proxySocket !== undefined;
  if (bindProxy && !hideRun) {
    args.push("--bind", layout.proxySocket as string, proxySocket);
  }
  if (hideRun) {
    args.push("--tmpfs", "/run");
    if (bindProxy) args.push("--bind", layout.proxySocket as string, proxySocket);
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
  // A hidden folder holding the workspace (a workspace in ~/.claude) is hidden all the same,
  // the workspace alone bound back into its empty stand-in; read-only after every mount.
  const hidden = policy.hidden.flatMap((path) => {
    const found = existing(path);
    return found === undefined ? [] : [found];
  });
  const above = hidden
    .filter(
      (found) =>
        found.kind === "dir" && found.real !== workspace && isWithin(workspace, found.real),
    )
    .map((found) => found.real);
  for (const folder of above) args.push("--tmpfs", folder);
  args.push("--bind", workspace, workspace);
  /** A path under such a folder but not the workspace stays hidden: no mount shows it again. */
  const shown = (path: string): boolean =>
    isWithin(path, workspace) || !above.some((folder) => isWithin(path, folder));
  for (const path of policy.writable) {
    const found = existing(path);
    if (found !== undefined && shown(found.real)) args.push("--bind", found.real, found.real);
  }
  for (const path of layout.guarded?.bound ?? []) args.push("--bind", path, path);
  for (const path of layout.guarded?.readOnly ?? []) args.push("--ro-bind", path, path);
  for (const path of [...policy.readOnly, ...policy.protectedInWorkspace]) {
    const found = existing(path);
    if (found !== undefined && shown(found.real)) args.push("--ro-bind", found.real, found.real);
  }
  for (const found of hidden) {
    if (isWithin(workspace, found.real)) continue;
    if (replaceTmp && isWithin(found.real, "/tmp")) continue;
    if (hideRun && isWithin(found.real, "/run")) continue;
    if (!shown(found.real)) continue;
    if (found.kind === "dir") args.push("--tmpfs", found.real, "--remount-ro", found.real);
    else args.push("--ro-bind", "/dev/null", found.real);
  }
  for (const folder of above) args.push("--remount-ro", folder);
  if (policy.network.kind !== "all") args.push("--unshare-net");
  args.push("--unshare-pid", "--unshare-ipc", "--die-with-parent", "--chdir", policy.workspace);
  // No capabilities, even for root: with them a command could remount `/` writable.
  args.push("--cap-drop", "ALL");
  if (layout.privilegeFilterFd !== undefined) {
    args.push("--add-seccomp-fd", String(layout.privilegeFilterFd));
  }
  // Unix sockets shut away unless the settings name some (unix-socket-filter.ts says why).
  const filterSockets = filtersUnixSockets(policy);
  if (!perl && filterSockets && layout.unixSocketFilterFd !== undefined) {
    args.push("--add-seccomp-fd", String(layout.unixSocketFilterFd));
  }
  args.push("--", "bash", "-c", LIMIT_PROCESSES, "bash", String(layout.maxProcesses));
  const script = perl ? PERL_RUNNER_SCRIPT : NODE_RUNNER_SCRIPT;
  args.push(layout.runner.path, "-e", script, String(layout.graceMs));
  args.push(...unixSocketFilterArgs(perl && filterSockets));
  if (layout.proxySocket !== undefined) args.push(perl ? proxySocket : "ipc", String(BRIDGE_PORT));
  return args;
}
