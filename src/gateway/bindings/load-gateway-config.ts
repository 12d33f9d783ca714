/**
 * Reads and checks the gateway's configuration file. Anything wrong (unreadable, not JSON, an
 * unknown key, a wrong type, two bindings of one name) is a `ConfigError` of one line naming
 * the file and the key path (`config.json: bindings[1].engine must be "rudder" or "claude"`).
 * Folders are resolved against the file's own folder (`~/` against the home folder).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import * as v from "valibot";
import { ConfigError } from "./config-error.js";
import { type GatewayConfig, GatewayConfigSchema } from "./gateway-config-schema.js";

/** A configuration as read: its content (folders absolute), where it came from, its hash. */
export interface LoadedConfig {
  file: string;
  config: GatewayConfig;
  /** SHA-256 of the file's content as checked (key order and spacing aside). */
  hash: string;
}

/** `bindings[1].engine` for an issue's path. */
function keyPath(issue: v.BaseIssue<unknown>): string {
  let path = "";
  for (const item of issue.path ?? []) {
    const key = item.key;
    if (typeof key === "number") path += `[${key}]`;
    else path += path === "" ? String(key) : `.${String(key)}`;
  }
  return path;
}

/** The one line that says what is wrong: the first issue, by its key path. */
export function describeIssue(issue: v.BaseIssue<unknown>): string {
  const path = keyPath(issue);
  if (issue.expected === "never") return `${path} is not a known key`;
  return path === "" ? issue.message : `${path} ${issue.message}`;
}

/** `line L, column C` of a character offset. */
function lineOf(source: string, offset: number): string {
  const before = source.slice(0, offset).split("\n");
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/** JSON.parse's complaint, with the line and column of the offset it names. */
function jsonProblem(source: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const position = /at position (\d+)/.exec(message)?.[1];
  const where = position === undefined ? "" : ` at ${lineOf(source, Number(position))}`;
  const what = message.replace(/\s*in JSON at position \d+.*$/, "").replace(/^JSON\.parse: /, "");
  return `not valid JSON${where}: ${what}`;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
      .filter(([, entry]) => entry !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${stableJson(entry)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function absoluteFolder(folder: string, base: string, home: string): string {
  if (folder === "~") return home;
  if (folder.startsWith("~/")) return join(home, folder.slice(2));
  return isAbsolute(folder) ? folder : resolve(base, folder);
}

/** Checks parsed JSON as a configuration from `file` (its folder resolves relative folders). */
export function checkGatewayConfig(
  file: string,
  json: unknown,
  home: string = homedir(),
): LoadedConfig | ConfigError {
  const parsed = v.safeParse(GatewayConfigSchema, json);
  if (!parsed.success) return new ConfigError(file, describeIssue(parsed.issues[0]));
  const config = parsed.output;
  const seen = new Set<string>();
  for (const [index, binding] of (config.bindings ?? []).entries()) {
    if (seen.has(binding.name) || binding.name === "defaults") {
      const taken = binding.name === "defaults" ? "is the defaults' name" : "is used twice";
      return new ConfigError(file, `bindings[${index}].name "${binding.name}" ${taken}`);
    }
    seen.add(binding.name);
  }
  const hash = createHash("sha256").update(stableJson(config)).digest("hex");
  const base = dirname(resolve(file));
  const withFolder = <T extends { cwd?: string | undefined }>(entry: T): T =>
    entry.cwd === undefined ? entry : { ...entry, cwd: absoluteFolder(entry.cwd, base, home) };
  return {
    file,
    hash,
    config: {
      ...config,
      ...(config.defaults ? { defaults: withFolder(config.defaults) } : {}),
      ...(config.bindings ? { bindings: config.bindings.map(withFolder) } : {}),
    },
  };
}

/** Reads `file` and checks it; never rejects. */
export async function loadGatewayConfig(
  file: string,
  home: string = homedir(),
): Promise<LoadedConfig | ConfigError> {
  let source: string;
  try {
    source = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : `cannot be read (${code ?? String(error)})`;
    return new ConfigError(file, why, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (error) {
    return new ConfigError(file, jsonProblem(source, error), { cause: error });
  }
  return checkGatewayConfig(file, json, home);
}
