import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { HookEventName, HooksConfig } from "../hooks/types.js";
import type { PermissionRules } from "../permissions/types.js";
import { mergeSandboxSettings, type SandboxSettings } from "../sandbox/sandbox-settings.js";
import { parseSettingsFragment, type SettingsFragment } from "./settings-schema.js";

/** The merged settings of every file rudder read. */
export interface RudderSettings {
  permissions: PermissionRules;
  hooks: HooksConfig;
  env: Record<string, string>;
  model?: string;
  autoCompactEnabled?: boolean;
  autoCompactWindow?: number;
  /** Claude Code's `mcpServers` (stdio servers by name); absent when no file sets it. */
  mcpServers?: Record<string, unknown>;
  /** `false`: no CLAUDE.md / AGENTS.md in the system prompt; absent when no file sets it. */
  projectInstructions?: boolean;
  /** Claude Code's `sandbox`, merged: switches from the last file setting them, lists accumulated. */
  sandbox?: SandboxSettings;
}

export interface LoadSettingsOptions {
  /** The workspace; project settings live in `<cwd>/.rudder/`. */
  cwd: string;
  /** The user's home; user settings live in `<home>/.rudder/settings.json`. */
  home: string;
  /**
   * `--settings`: a file path (relative to `cwd`), or a JSON object given
   * inline as Claude Code allows. Read last, so it wins where later wins.
   */
  settingsFile?: string;
}

export interface LoadedSettings {
  settings: RudderSettings;
  /** The files that were read and used, in the order they were merged. */
  sources: string[];
  /** One line per file skipped or part ignored, naming the file. */
  warnings: string[];
  /**
   * Problems with the explicit `--settings` file (missing, unreadable, bad
   * JSON or shape): the CLI should print them and exit 2.
   */
  errors: string[];
}

/**
 * Reads and merges, in order, `~/.rudder/settings.json`,
 * `<cwd>/.rudder/settings.json`, `<cwd>/.rudder/settings.local.json` and
 * the `--settings` file. Permission rules and hooks accumulate (rules
 * deduplicated); `env` entries, `mcpServers` entries (by name) and `model`
 * are taken from the last file that sets them. A missing optional file is skipped silently, a broken one with a
 * warning. Never rejects.
 */
function withSlash(folder: string): string {
  return folder.endsWith("/") ? folder : `${folder}/`;
}

export async function loadSettings(options: LoadSettingsOptions): Promise<LoadedSettings> {
  const result: LoadedSettings = {
    settings: emptySettings(),
    sources: [],
    warnings: [],
    errors: [],
  };
  const seen = new Set<string>();
  // Each folder resolved once and the names appended: the one-shot start-up pays for every
  // path normalization (see test/cli/run-footprint.test.ts).
  const home = withSlash(resolve(options.home));
  const cwd = withSlash(resolve(options.cwd));
  const optionalFiles = [
    `${home}.rudder/settings.json`,
    `${cwd}.rudder/settings.json`,
    `${cwd}.rudder/settings.local.json`,
  ];
  for (const resolved of optionalFiles) {
    if (seen.has(resolved)) continue;
    seen.add(resolved);
    const loaded = await readSettingsFile(resolved);
    if (loaded.kind === "missing") continue;
    if (loaded.kind === "problem") {
      result.warnings.push(`${resolved}: ${loaded.problem}; file ignored`);
      continue;
    }
    apply(result, resolved, loaded.fragment, loaded.warnings);
  }
  if (options.settingsFile !== undefined) {
    const explicit = options.settingsFile;
    const isInline = explicit.trimStart().startsWith("{");
    const label = isInline ? "--settings (inline JSON)" : resolve(options.cwd, explicit);
    const loaded = isInline ? parseText(explicit) : await readSettingsFile(label);
    if (loaded.kind === "missing") {
      result.errors.push(`${label}: settings file not found`);
    } else if (loaded.kind === "problem") {
      result.errors.push(`${label}: ${loaded.problem}`);
    } else if (!seen.has(label)) {
      apply(result, label, loaded.fragment, loaded.warnings);
    }
  }
  return result;
}

export function emptySettings(): RudderSettings {
  return { permissions: { allow: [], ask: [], deny: [] }, hooks: {}, env: {} };
}

type FileResult =
  | { kind: "missing" }
  | { kind: "problem"; problem: string }
  | { kind: "loaded"; fragment: SettingsFragment; warnings: string[] };

async function readSettingsFile(path: string): Promise<FileResult> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "missing" };
    return { kind: "problem", problem: `cannot be read (${code ?? (error as Error).message})` };
  }
  return parseText(text);
}

function parseText(text: string): FileResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { kind: "problem", problem: `invalid JSON (${(error as Error).message})` };
  }
  const parsed = parseSettingsFragment(json);
  if (!parsed.ok) return { kind: "problem", problem: `invalid settings (${parsed.problem})` };
  return { kind: "loaded", fragment: parsed.fragment, warnings: parsed.warnings };
}

function apply(
  result: LoadedSettings,
  source: string,
  fragment: SettingsFragment,
  warnings: readonly string[],
): void {
  const settings = result.settings;
  for (const list of ["allow", "ask", "deny"] as const) {
    settings.permissions[list] = [
      ...new Set([...settings.permissions[list], ...fragment.permissions[list]]),
    ];
  }
  for (const [event, groups] of Object.entries(fragment.hooks) as [
    HookEventName,
    HooksConfig[HookEventName],
  ][]) {
    settings.hooks[event] = [...(settings.hooks[event] ?? []), ...(groups ?? [])];
  }
  Object.assign(settings.env, fragment.env);
  if (fragment.model !== undefined) settings.model = fragment.model;
  if (fragment.projectInstructions !== undefined) {
    settings.projectInstructions = fragment.projectInstructions;
  }
  if (fragment.autoCompactEnabled !== undefined) {
    settings.autoCompactEnabled = fragment.autoCompactEnabled;
  }
  if (fragment.autoCompactWindow !== undefined) {
    settings.autoCompactWindow = fragment.autoCompactWindow;
  }
  if (fragment.mcpServers !== undefined) {
    settings.mcpServers = { ...settings.mcpServers, ...fragment.mcpServers };
  }
  if (fragment.sandbox !== undefined) {
    settings.sandbox = mergeSandboxSettings(settings.sandbox ?? {}, fragment.sandbox);
  }
  result.sources.push(source);
  for (const warning of warnings) result.warnings.push(`${source}: ${warning}`);
}
