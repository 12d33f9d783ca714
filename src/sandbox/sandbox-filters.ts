/**
 * The seccomp filters of one sandbox and where each goes. The privilege filter is bubblewrap's
 * to load on the whole sandbox. The unix-socket filter is installed by perl's runner on each
 * command (its own bridge to the proxy is a unix socket); node's runner cannot install one, so
 * there the whole sandbox runs under it, runner included, and its bridge takes each connection
 * to the proxy from rudder over its IPC channel instead of making a socket.
 */
import type { BubblewrapLayout, RunnerProgram } from "./bubblewrap-args.js";
import { privilegeFilter } from "./privilege-filter.js";
import type { SandboxPolicy } from "./sandbox-policy.js";
import { PRIVILEGE_FILTER_FD, UNIX_SOCKET_FILTER_FD } from "./sandbox-runner.js";
import { filtersUnixSockets, unixSocketFilter } from "./unix-socket-filter.js";

export interface SandboxFilters {
  /** bubblewrap's descriptors for them. */
  layout: Pick<BubblewrapLayout, "privilegeFilterFd" | "unixSocketFilterFd">;
  /** What `SandboxRunner` writes to those descriptors, and the node runner's bridge. */
  runner: { privilegeFilter?: Buffer; unixSocketFilter?: Buffer; bridgeTo?: string };
}

export function sandboxFilters(
  policy: SandboxPolicy,
  runner: RunnerProgram,
  proxySocket: string | undefined,
): SandboxFilters {
  const privilege = privilegeFilter();
  const node = runner.kind === "node";
  const sockets = node && filtersUnixSockets(policy) ? unixSocketFilter() : undefined;
  return {
    layout: {
      ...(privilege === undefined ? {} : { privilegeFilterFd: PRIVILEGE_FILTER_FD }),
      ...(sockets === undefined ? {} : { unixSocketFilterFd: UNIX_SOCKET_FILTER_FD }),
    },
    runner: {
      ...(privilege === undefined ? {} : { privilegeFilter: privilege }),
      ...(sockets === undefined ? {} : { unixSocketFilter: sockets }),
      ...(node && proxySocket !== undefined ? { bridgeTo: proxySocket } : {}),
    },
  };
}
