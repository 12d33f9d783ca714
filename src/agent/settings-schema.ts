import * as v from "valibot";
import {
  type CommandHookConfig,
  HOOK_EVENTS,
  type HookEventName,
  type HookMatcherGroup,
  type HooksConfig,
} from "../hooks/types.js";
import type { PermissionRules } from "../permissions/types.js";
import { type SandboxSettings, sandboxSettingsSchema } from "../sandbox/sandbox-settings.js";

/** What one settings file contributes, after validation. */
export interface SettingsFragment {
  permissions: PermissionRules;
  hooks: HooksConfig;
  env: Record<string, string>;
  model?: string;
  /** Claude Code's compaction keys: `false` leaves compaction to `/compact`; a smaller window. */
  autoCompactEnabled?: boolean;
  autoCompactWindow?: number;
  /** Claude Code's `mcpServers`, entries unchecked here (src/mcp reads them); absent when unset. */
  mcpServers?: Record<string, unknown>;
  /** rudder's `projectInstructions`: `false` leaves CLAUDE.md / AGENTS.md out. */
  projectInstructions?: boolean;
  /** Claude Code's `sandbox`; absent when unset. */
  sandbox?: SandboxSettings;
}

/**
 * `schema` (an object or record schema) behind a check that the value is not
 * an array: valibot's `object` and `record` take arrays too, and an array
 * where a settings file wants an object is a mistake to report, not an empty
 * object (or one keyed "0", "1", ...).
 */
function jsonObject<const Schema extends v.GenericSchema<Record<string, unknown>, unknown>>(
  schema: Schema,
) {
  return v.pipe(
    v.custom<Record<string, unknown>>(
      (value) => typeof value === "object" && value !== null && !Array.isArray(value),
      (issue) => `Invalid type: Expected Object but received ${issue.received}`,
    ),
    schema,
  );
}

const ruleListSchema = v.optional(v.array(v.string()));

/**
 * The parts of a settings file rudder reads, in Claude Code's shape. Unknown
 * keys (Claude Code's `statusLine`, `permissions.defaultMode`, ...) are ignored.
 */
const settingsFileSchema = jsonObject(
  v.object({
    permissions: v.optional(
      jsonObject(v.object({ allow: ruleListSchema, ask: ruleListSchema, deny: ruleListSchema })),
    ),
    hooks: v.optional(
      jsonObject(
        v.record(
          v.string(),
          v.array(
            v.object({
              matcher: v.optional(v.string()),
              hooks: v.array(v.looseObject({ type: v.string() })),
            }),
          ),
        ),
      ),
    ),
    env: v.optional(
      jsonObject(v.record(v.string(), v.union([v.string(), v.number(), v.boolean()]))),
    ),
    model: v.optional(v.string()),
    autoCompactEnabled: v.optional(v.boolean()),
    autoCompactWindow: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    mcpServers: v.optional(jsonObject(v.record(v.string(), v.unknown()))),
    projectInstructions: v.optional(v.boolean()),
    sandbox: v.optional(jsonObject(sandboxSettingsSchema)),
  }),
);

const commandHookSchema = v.pipe(
  v.object({
    type: v.literal("command"),
    command: v.optional(v.string()),
    args: v.optional(v.pipe(v.array(v.string()), v.minLength(1))),
    timeout: v.optional(v.pipe(v.number(), v.gtValue(0))),
  }),
  v.check(
    (hook) => (hook.command ?? "").trim() !== "" || hook.args !== undefined,
    'a command hook needs a non-empty "command" or "args"',
  ),
);

export type FragmentResult =
  | { ok: true; fragment: SettingsFragment; warnings: string[] }
  | { ok: false; problem: string };

/**
 * Validates one parsed settings file. A shape rudder cannot use is a
 * problem (the file is skipped); parts rudder does not support (other hook
 * events, non-command hook types) are warnings and are left out.
 */
export function parseSettingsFragment(json: unknown): FragmentResult {
  const parsed = v.safeParse(settingsFileSchema, json);
  if (!parsed.success) return { ok: false, problem: describeIssue(parsed.issues[0]) };
  const data = parsed.output;
  const warnings: string[] = [];
  const hooks: HooksConfig = {};
  for (const [event, groups] of Object.entries(data.hooks ?? {})) {
    if (!isHookEvent(event)) {
      warnings.push(`hooks for ${event} are not supported by rudder and are ignored`);
      continue;
    }
    const kept: HookMatcherGroup[] = [];
    for (const [groupIndex, group] of groups.entries()) {
      const commands: CommandHookConfig[] = [];
      for (const [hookIndex, hook] of group.hooks.entries()) {
        if (hook.type !== "command") {
          warnings.push(`${event} hook of type "${hook.type}" is not supported and is ignored`);
          continue;
        }
        const command = v.safeParse(commandHookSchema, hook);
        if (!command.success) {
          const where = `hooks.${event}.${groupIndex}.hooks.${hookIndex}`;
          return { ok: false, problem: describeIssue(command.issues[0], where) };
        }
        commands.push(command.output);
      }
      if (commands.length === 0) continue;
      kept.push(
        group.matcher === undefined
          ? { hooks: commands }
          : { matcher: group.matcher, hooks: commands },
      );
    }
    if (kept.length > 0) hooks[event] = kept;
  }
  const fragment: SettingsFragment = {
    permissions: {
      allow: data.permissions?.allow ?? [],
      ask: data.permissions?.ask ?? [],
      deny: data.permissions?.deny ?? [],
    },
    hooks,
    env: Object.fromEntries(
      Object.entries(data.env ?? {}).map(([name, value]) => [name, String(value)]),
    ),
    ...(data.model === undefined ? {} : { model: data.model }),
    ...(data.autoCompactEnabled === undefined
      ? {}
      : { autoCompactEnabled: data.autoCompactEnabled }),
    ...(data.autoCompactWindow === undefined ? {} : { autoCompactWindow: data.autoCompactWindow }),
    ...(data.mcpServers === undefined ? {} : { mcpServers: data.mcpServers }),
    ...(data.projectInstructions === undefined
      ? {}
      : { projectInstructions: data.projectInstructions }),
    ...(data.sandbox === undefined ? {} : { sandbox: data.sandbox }),
  };
  return { ok: true, fragment, warnings };
}

function isHookEvent(name: string): name is HookEventName {
  return (HOOK_EVENTS as readonly string[]).includes(name);
}

/**
 * One line: `path: message`. valibot quotes a received string as it is, so
 * line breaks in it are escaped.
 */
function describeIssue(issue: v.BaseIssue<unknown>, prefix?: string): string {
  const path = [prefix, v.getDotPath(issue)].filter((part) => part != null).join(".");
  const message = issue.message.replaceAll("\r", "\\r").replaceAll("\n", "\\n");
  return path === "" ? message : `${path}: ${message}`;
}
