import type { SandboxPolicy } from "./sandbox-policy.js";

const READ_ONLY = /Read-only file system|EROFS/;
/** A write to a file bound read-only over itself (git's config) fails so, not with EROFS. */
const BUSY_MOUNT = /Device or resource busy|EBUSY/;
const TOO_MANY_PROCESSES =
  /fork: (retry: )?Resource temporarily unavailable|EAGAIN.*spawn|spawn.*EAGAIN/;
const NO_NETWORK =
  /Network is unreachable|ENETUNREACH|Could not resolve host|Temporary failure in name resolution|Name or service not known|EAI_AGAIN|getaddrinfo|Connection refused|ECONNREFUSED|Couldn't connect to server|nodename nor servname/i;

/**
 * A note for the model when a sandboxed command's output shows the sandbox
 * stopped it, saying what the policy allows, so it can adapt instead of
 * retrying: a write outside the writable folders, a refused connection, the
 * process limit reached.
 * Undefined when the output shows neither.
 */
export function sandboxFailureNote(output: string, policy: SandboxPolicy): string | undefined {
  const notes: string[] = [];
  if (READ_ONLY.test(output)) {
    notes.push(
      `the sandbox allows writes only in the workspace (${policy.workspace}) and $TMPDIR (/tmp)` +
        `${policy.writable.length > 0 ? ` and ${policy.writable.join(", ")}` : ""}; ` +
        "everything else, and in the workspace rudder's and Claude Code's settings, git's control files " +
        "(config, hooks, ...) and other files that run code outside the sandbox, is read-only",
    );
  }
  if (BUSY_MOUNT.test(output)) {
    notes.push(
      "git's config and hooks, and files that run code outside the sandbox, cannot be changed or moved from the sandbox: " +
        "set identity with `git -c user.name=... -c user.email=... commit` or GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL; " +
        "write other such files with write_file or edit_file, which ask the user",
    );
  }
  if (NO_NETWORK.test(output) && policy.network.kind !== "all") notes.push(networkNote(policy));
  if (TOO_MANY_PROCESSES.test(output)) {
    notes.push(
      `the sandbox holds at most ${policy.maxProcesses} processes at once (threads count): ` +
        "a command that forks without end stops there; run fewer at a time (sandbox.maxProcesses sets the limit)",
    );
  }
  return notes.length === 0 ? undefined : notes.map((note) => `[sandbox] ${note}`).join("\n");
}

function networkNote(policy: SandboxPolicy): string {
  switch (policy.network.kind) {
    case "none":
      return "the sandbox has no network (not even the host's loopback): connections and name lookups fail; sandbox.network.allowedDomains opens it";
    default:
      return `the sandbox reaches the network only through its proxy (HTTP_PROXY/HTTPS_PROXY), and only these domains: ${policy.network.kind === "domains" ? policy.network.allowed.join(", ") : ""}`;
  }
}
