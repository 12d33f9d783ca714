import { isAbsolute, join, resolve } from "node:path";
import type { SandboxSettings } from "./sandbox-settings.js";

/** Where a sandboxed command may reach the network. */
export type NetworkPolicy =
  | { kind: "none" }
  | { kind: "all" }
  | { kind: "domains"; allowed: string[]; denied: string[] };

/** What confines a `bash` command, resolved from settings to absolute paths. */
export interface SandboxPolicy {
  /** On unless `sandbox.enabled` is false or `--no-sandbox` was given. */
  enabled: boolean;
  /** Claude Code's default: sandboxed bash commands run without asking. */
  autoAllowBash: boolean;
  /** Refuse to run bash at all rather than run it unconfined. */
  failIfUnavailable: boolean;
  /** Command prefixes that run outside the sandbox (and so are judged by the strict gate). */
  excludedCommands: string[];
  /** How many processes (tasks: threads count) the sandbox may hold at once: a fork bomb stops there. */
  maxProcesses: number;
  workspace: string;
  /** Writable beyond the workspace and the private temporary folder. */
  writable: string[];
  /** Read-only even where writable: the configuration files of hooks and MCP servers, `denyWrite`. */
  readOnly: string[];
  /** Protected files and folders of the workspace that may not exist yet: they may not be created. */
  protectedInWorkspace: string[];
  /** Not visible at all: secrets, rudder's data folder, `denyRead`. */
  hidden: string[];
  network: NetworkPolicy;
  /** Unix sockets reachable although `/run` is hidden. */
  allowUnixSockets: string[];
  allowAllUnixSockets: boolean;
}

/** Enough for builds and test runners with worker threads; few enough to leave the machine alive. */
export const DEFAULT_MAX_PROCESSES = 1024;

export interface PolicyContext {
  workspace: string;
  home: string;
  /** rudder's data folder (`RUDDER_HOME`, default `~/.rudder`): the gateway's token, transcripts. */
  rudderHome: string;
  /** `CLAUDE_CONFIG_DIR`, when set. */
  claudeConfigDir?: string;
  /**
   * The agent's environment, for the folders it names that hold credentials or rudder's data
   * (`CREDENTIAL_LOCATIONS`, `GATEWAY_DATA_VARIABLE`).
   */
  env?: NodeJS.ProcessEnv;
  /** `--no-sandbox`. */
  disabled?: boolean;
}

/** Credentials a command never needs to see, relative to the home folder. */
export const SECRET_PATHS = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".config/gh",
  ".kube",
  ".docker",
  ".netrc",
  ".git-credentials",
  ".claude",
  ".claude.json",
];

/**
 * Set by `rudder serve` for its agents to the gateway's data folder (`--data`): the token and
 * every channel's conversation, hidden from commands wherever it is.
 */
export const GATEWAY_DATA_VARIABLE = "RUDDER_GATEWAY_DATA";

/** Variables that move a credential folder or file away from `SECRET_PATHS`; each is hidden too. */
const CREDENTIAL_LOCATIONS = [
  "GH_CONFIG_DIR",
  "DOCKER_CONFIG",
  "GNUPGHOME",
  "AWS_SHARED_CREDENTIALS_FILE",
  "AWS_CONFIG_FILE",
  "KUBECONFIG",
  GATEWAY_DATA_VARIABLE,
];

/** The secret paths `env` names (absolute ones only; `KUBECONFIG` is a list). */
function secretsFromEnvironment(env: NodeJS.ProcessEnv): string[] {
  const found: string[] = [];
  for (const name of CREDENTIAL_LOCATIONS) {
    for (const path of (env[name] ?? "").split(":"))
      if (isAbsolute(path)) found.push(resolve(path));
  }
  const config = env.XDG_CONFIG_HOME;
  if (config !== undefined && isAbsolute(config)) found.push(join(config, "gh"));
  return found;
}

/** Claude Code's protected paths: what configures code that runs unconfined next time. */
export const PROTECTED_WORKSPACE_PATHS = [
  ".rudder",
  ".claude",
  ".mcp.json",
  ".git/hooks",
  ".git/config",
];

/**
 * A settings path as Claude Code writes them: `~/...` in the home folder,
 * `//...` or `/...` absolute, anything else relative to the workspace.
 */
export function resolveSettingsPath(path: string, context: PolicyContext): string {
  if (path === "~") return context.home;
  if (path.startsWith("~/")) return join(context.home, path.slice(2));
  if (isAbsolute(path)) return resolve(path.replace(/^\/\/+/, "/"));
  return resolve(context.workspace, path);
}

function networkPolicy(network: SandboxSettings["network"]): NetworkPolicy {
  const allowed = network?.allowedDomains ?? [];
  if (allowed.includes("*")) return { kind: "all" };
  if (allowed.length === 0) return { kind: "none" };
  return { kind: "domains", allowed, denied: network?.deniedDomains ?? [] };
}

/**
 * `names` (plain relative paths) in `folder`, normalized once: concatenated rather than
 * joined one by one, as the path module's normalization of each adds to what the one-shot
 * start-up pays (enough of it makes V8 compile the normalizer, megabytes of peak memory).
 */
function inFolder(folder: string, names: readonly string[]): string[] {
  const base = resolve(folder);
  const prefix = base.endsWith("/") ? base : `${base}/`;
  return names.map((name) => `${prefix}${name}`);
}

/** The policy for `settings.sandbox`, with rudder's defaults where it is silent. */
export function sandboxPolicy(settings: SandboxSettings, context: PolicyContext): SandboxPolicy {
  const paths = (list: string[] | undefined): string[] =>
    (list ?? []).map((path) => resolveSettingsPath(path, context));
  const hidden = [
    ...inFolder(context.home, SECRET_PATHS),
    context.rudderHome,
    ...(context.claudeConfigDir === undefined ? [] : [context.claudeConfigDir]),
    ...(context.env === undefined ? [] : secretsFromEnvironment(context.env)),
    ...paths(settings.filesystem?.denyRead),
  ];
  return {
    enabled: settings.enabled !== false && context.disabled !== true,
    autoAllowBash: settings.autoAllowBashIfSandboxed !== false,
    failIfUnavailable: settings.failIfUnavailable === true,
    excludedCommands: settings.excludedCommands ?? [],
    maxProcesses: settings.maxProcesses ?? DEFAULT_MAX_PROCESSES,
    // Normalized, as the mount arguments compare it with other paths as strings.
    workspace: resolve(context.workspace),
    writable: paths(settings.filesystem?.allowWrite),
    readOnly: paths(settings.filesystem?.denyWrite),
    protectedInWorkspace: inFolder(context.workspace, PROTECTED_WORKSPACE_PATHS),
    hidden: [...new Set(hidden)],
    network: networkPolicy(settings.network),
    allowUnixSockets: paths(settings.network?.allowUnixSockets),
    allowAllUnixSockets: settings.network?.allowAllUnixSockets === true,
  };
}
