import * as v from "valibot";

interface ServerConfigBase {
  /** The name it is configured under; tools are named `mcp__<name>__<tool>`. */
  name: string;
  /** Per-call timeout in milliseconds (Claude Code's `timeout`); absent: the default. */
  toolTimeoutMs?: number;
  /** Where it was configured, for messages: a file path or `--mcp-config`. */
  source: string;
}

/** One stdio MCP server to start, as Claude Code configures it. */
export interface StdioServerConfig extends ServerConfigBase {
  type?: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * An in-process server of the host (the Agent SDK's `createSdkMcpServer`, `{"type": "sdk"}`),
 * reached through `mcp_message` control requests.
 */
export interface SdkServerConfig extends ServerConfigBase {
  type: "sdk";
}

export type McpServerConfig = StdioServerConfig | SdkServerConfig;

export interface ParsedServers {
  servers: McpServerConfig[];
  /** One line each: a server skipped (unsupported type, bad entry, unset variable). */
  warnings: string[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const stdioEntrySchema = v.object({
  type: v.optional(v.literal("stdio")),
  command: v.pipe(v.string(), v.trim(), v.nonEmpty("a non-empty command is required")),
  args: v.optional(v.array(v.string())),
  // valibot's record takes an array too (["A=1"] would set a variable named "0").
  env: v.optional(
    v.pipe(
      v.custom<Record<string, unknown>>(isObject, 'an object of NAME: "value" is required'),
      v.record(v.string(), v.union([v.string(), v.number(), v.boolean()])),
    ),
  ),
  timeout: v.optional(v.number()),
});

/**
 * Claude Code's `${VAR}` and `${VAR:-default}` in a configured string, from
 * `env`. Unset variables without a default are collected in `missing`.
 */
export function expandVariables(
  text: string,
  env: NodeJS.ProcessEnv,
  missing: Set<string>,
): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (whole, name: string, fallback: string | undefined) => {
      const value = env[name];
      if (value !== undefined) return value;
      if (fallback !== undefined) return fallback;
      missing.add(name);
      return whole;
    },
  );
}

/**
 * The servers of an `mcpServers` object (the value, not the file around it).
 * Entries rudder cannot start (http, sse and other types, malformed entries,
 * unset variables) are skipped with a warning naming the server and `source`.
 */
export function parseMcpServers(
  value: unknown,
  source: string,
  env: NodeJS.ProcessEnv,
): ParsedServers {
  const result: ParsedServers = { servers: [], warnings: [] };
  if (value === undefined) return result;
  if (!isObject(value)) {
    result.warnings.push(`${source}: mcpServers must be an object; ignored`);
    return result;
  }
  for (const [name, entry] of Object.entries(value)) {
    const skip = (why: string): void => {
      result.warnings.push(`${source}: MCP server "${name}" ${why}; skipped`);
    };
    if (!isObject(entry)) {
      skip("is not an object");
      continue;
    }
    const type = entry.type ?? "stdio";
    if (type === "sdk") {
      result.servers.push({ type: "sdk", name, source });
      continue;
    }
    if (type !== "stdio") {
      skip(`has type "${String(type)}", which rudder does not support (only stdio and sdk)`);
      continue;
    }
    const parsed = v.safeParse(stdioEntrySchema, entry);
    if (!parsed.success) {
      const issue = parsed.issues[0];
      skip(`is invalid (${v.getDotPath(issue) ?? "entry"}: ${issue.message})`);
      continue;
    }
    const missing = new Set<string>();
    const expand = (text: string): string => expandVariables(text, env, missing);
    const server: StdioServerConfig = {
      name,
      command: expand(parsed.output.command),
      args: (parsed.output.args ?? []).map(expand),
      env: Object.fromEntries(
        Object.entries(parsed.output.env ?? {}).map(([key, raw]) => [key, expand(String(raw))]),
      ),
      source,
    };
    if (missing.size > 0) {
      skip(`uses unset environment variables: ${[...missing].join(", ")}`);
      continue;
    }
    const timeout = parsed.output.timeout;
    if (timeout !== undefined && timeout >= 1000) server.toolTimeoutMs = timeout;
    result.servers.push(server);
  }
  return result;
}

/**
 * Server lists merged by name, a later list's entry replacing an earlier
 * one's (keeping the earlier position).
 */
export function mergeServers(...lists: McpServerConfig[][]): McpServerConfig[] {
  const byName = new Map<string, McpServerConfig>();
  for (const list of lists) for (const server of list) byName.set(server.name, server);
  return [...byName.values()];
}
