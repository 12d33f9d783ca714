import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type McpServerConfig, mergeServers, parseMcpServers } from "./server-config.js";

export interface McpConfigOptions {
  /** The workspace, where a project's `.mcp.json` lives. */
  workspace: string;
  /** For `${VAR}` expansion in the configuration. */
  env: NodeJS.ProcessEnv;
  /** `--mcp-config` values: JSON objects given inline, or file paths (relative to `baseDir`). */
  configArgs: readonly string[];
  /** Where relative `--mcp-config` paths start (where the user typed them). */
  baseDir: string;
  /** `--strict-mcp-config`: only the `--mcp-config` servers, none from files. */
  strict: boolean;
  /** The merged `mcpServers` of the settings files. */
  settingsServers: Record<string, unknown>;
}

export interface LoadedMcpConfig {
  servers: McpServerConfig[];
  /** Servers skipped, a broken `.mcp.json`: one line each. */
  warnings: string[];
  /** Problems with an explicit `--mcp-config` (the CLI exits 2 on them, as for `--settings`). */
  errors: string[];
}

type ConfigText = { ok: true; json: unknown } | { ok: false; problem: string; missing?: boolean };

async function readJson(path: string): Promise<ConfigText> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT"
      ? { ok: false, problem: "file not found", missing: true }
      : { ok: false, problem: `cannot be read (${code ?? (error as Error).message})` };
  }
  return parseJson(text);
}

function parseJson(text: string): ConfigText {
  try {
    return { ok: true, json: JSON.parse(text) };
  } catch (error) {
    return { ok: false, problem: `invalid JSON (${(error as Error).message})` };
  }
}

/** The `mcpServers` value of a configuration file's object, or a problem. */
function serversOf(json: unknown): { ok: true; value: unknown } | { ok: false; problem: string } {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return { ok: false, problem: 'expected an object such as {"mcpServers": {...}}' };
  }
  return { ok: true, value: (json as Record<string, unknown>).mcpServers };
}

/**
 * `--mcp-config` values as Claude Code takes them: an inline JSON object, or
 * file paths, several of which may share one value separated by commas or
 * whitespace (so a path containing a comma or a space cannot be given).
 */
export function splitConfigArgs(values: readonly string[]): string[] {
  return values.flatMap((value) =>
    value.trimStart().startsWith("{")
      ? [value]
      : value.split(/[\s,]+/).filter((part) => part !== ""),
  );
}

/**
 * The stdio servers to start, merged by name in this order (later wins):
 * the workspace's `.mcp.json`, the settings files' `mcpServers`, then each
 * `--mcp-config` in turn. With `strict`, only the `--mcp-config` ones.
 * Never rejects.
 */
export async function loadMcpConfig(options: McpConfigOptions): Promise<LoadedMcpConfig> {
  const result: LoadedMcpConfig = { servers: [], warnings: [], errors: [] };
  const lists: McpServerConfig[][] = [];
  const take = (value: unknown, source: string): void => {
    const parsed = parseMcpServers(value, source, options.env);
    lists.push(parsed.servers);
    result.warnings.push(...parsed.warnings);
  };

  if (!options.strict) {
    const projectFile = join(options.workspace, ".mcp.json");
    const project = await readJson(projectFile);
    if (project.ok) {
      const servers = serversOf(project.json);
      if (servers.ok) take(servers.value, projectFile);
      else result.warnings.push(`${projectFile}: ${servers.problem}; file ignored`);
    } else if (project.missing !== true) {
      result.warnings.push(`${projectFile}: ${project.problem}; file ignored`);
    }
    take(options.settingsServers, "settings (mcpServers)");
  }

  for (const argument of splitConfigArgs(options.configArgs)) {
    const inline = argument.trimStart().startsWith("{");
    const label = inline ? "--mcp-config (inline JSON)" : resolve(options.baseDir, argument);
    const loaded = inline ? parseJson(argument) : await readJson(label);
    if (!loaded.ok) {
      result.errors.push(`${label}: ${loaded.problem}`);
      continue;
    }
    const servers = serversOf(loaded.json);
    if (!servers.ok) {
      result.errors.push(`${label}: ${servers.problem}`);
      continue;
    }
    take(servers.value, label);
  }
  result.servers = mergeServers(...lists);
  return result;
}
