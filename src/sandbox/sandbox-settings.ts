import * as v from "valibot";

const pathList = v.optional(v.array(v.string()));

/**
 * Claude Code's `sandbox` settings key, the parts rudder reads (unknown keys
 * are ignored, as elsewhere in a settings file). `filesystem` is where rudder
 * takes its extra paths: `allowWrite` (writable beyond the workspace and the
 * private temporary folder), `denyWrite` (read-only even inside them),
 * `denyRead` (hidden, beside the built-in secrets). `maxProcesses` is
 * rudder's own: how many processes the sandbox may hold at once.
 * `askBeforeDestroying` is rudder's own too: when a person can answer (the
 * terminal chat, ACP, a host with a permission prompt), commands that delete
 * or overwrite work ask even in the sandbox; `false` turns that off.
 */
export const sandboxSettingsSchema = v.object({
  enabled: v.optional(v.boolean()),
  autoAllowBashIfSandboxed: v.optional(v.boolean()),
  failIfUnavailable: v.optional(v.boolean()),
  askBeforeDestroying: v.optional(v.boolean()),
  excludedCommands: v.optional(v.array(v.string())),
  maxProcesses: v.optional(v.pipe(v.number(), v.integer(), v.minValue(16))),
  network: v.optional(
    v.object({
      allowedDomains: v.optional(v.array(v.string())),
      deniedDomains: v.optional(v.array(v.string())),
      allowUnixSockets: v.optional(v.array(v.string())),
      allowAllUnixSockets: v.optional(v.boolean()),
      allowLocalBinding: v.optional(v.boolean()),
    }),
  ),
  filesystem: v.optional(
    v.object({ allowWrite: pathList, denyWrite: pathList, denyRead: pathList }),
  ),
});

export type SandboxSettings = v.InferOutput<typeof sandboxSettingsSchema>;

function concat(first?: string[], second?: string[]): string[] | undefined {
  return first === undefined && second === undefined
    ? undefined
    : [...new Set([...(first ?? []), ...(second ?? [])])];
}

function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}

/**
 * Merges a later settings file's `sandbox` into an earlier one's: a switch set
 * later wins, lists (commands, domains, paths) accumulate.
 */
export function mergeSandboxSettings(
  earlier: SandboxSettings,
  later: SandboxSettings,
): SandboxSettings {
  const network = defined({
    ...earlier.network,
    ...later.network,
    allowedDomains: concat(earlier.network?.allowedDomains, later.network?.allowedDomains),
    deniedDomains: concat(earlier.network?.deniedDomains, later.network?.deniedDomains),
    allowUnixSockets: concat(earlier.network?.allowUnixSockets, later.network?.allowUnixSockets),
  });
  const filesystem = defined({
    allowWrite: concat(earlier.filesystem?.allowWrite, later.filesystem?.allowWrite),
    denyWrite: concat(earlier.filesystem?.denyWrite, later.filesystem?.denyWrite),
    denyRead: concat(earlier.filesystem?.denyRead, later.filesystem?.denyRead),
  });
  return defined({
    ...earlier,
    ...later,
    excludedCommands: concat(earlier.excludedCommands, later.excludedCommands),
    network: Object.keys(network).length === 0 ? undefined : network,
    filesystem: Object.keys(filesystem).length === 0 ? undefined : filesystem,
  });
}
