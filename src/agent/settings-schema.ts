import { z } from "zod";
import {
  type CommandHookConfig,
  HOOK_EVENTS,
  type HookEventName,
  type HookMatcherGroup,
  type HooksConfig,
} from "../hooks/types.js";
import type { PermissionRules } from "../permissions/types.js";

/** What one settings file contributes, after validation. */
export interface SettingsFragment {
  permissions: PermissionRules;
  hooks: HooksConfig;
  env: Record<string, string>;
  model?: string;
}

const ruleListSchema = z.array(z.string()).optional();

/**
 * The parts of a settings file rudder reads, in Claude Code's shape. Unknown
 * keys (Claude Code's `statusLine`, `permissions.defaultMode`, ...) are ignored.
 */
const settingsFileSchema = z.object({
  permissions: z
    .object({ allow: ruleListSchema, ask: ruleListSchema, deny: ruleListSchema })
    .optional(),
  hooks: z
    .record(
      z.string(),
      z.array(
        z.object({
          matcher: z.string().optional(),
          hooks: z.array(z.object({ type: z.string() }).loose()),
        }),
      ),
    )
    .optional(),
  env: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  model: z.string().optional(),
});

const commandHookSchema = z
  .object({
    type: z.literal("command"),
    command: z.string().optional(),
    args: z.array(z.string()).min(1).optional(),
    timeout: z.number().positive().optional(),
  })
  .refine((hook) => (hook.command ?? "").trim() !== "" || hook.args !== undefined, {
    message: 'a command hook needs a non-empty "command" or "args"',
  });

export type FragmentResult =
  | { ok: true; fragment: SettingsFragment; warnings: string[] }
  | { ok: false; problem: string };

/**
 * Validates one parsed settings file. A shape rudder cannot use is a
 * problem (the file is skipped); parts rudder does not support (other hook
 * events, non-command hook types) are warnings and are left out.
 */
export function parseSettingsFragment(json: unknown): FragmentResult {
  const parsed = settingsFileSchema.safeParse(json);
  if (!parsed.success) return { ok: false, problem: describeIssue(parsed.error) };
  const data = parsed.data;
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
        const command = commandHookSchema.safeParse(hook);
        if (!command.success) {
          const where = `hooks.${event}.${groupIndex}.hooks.${hookIndex}`;
          return { ok: false, problem: describeIssue(command.error, where) };
        }
        commands.push(command.data);
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
  };
  return { ok: true, fragment, warnings };
}

function isHookEvent(name: string): name is HookEventName {
  return (HOOK_EVENTS as readonly string[]).includes(name);
}

function describeIssue(error: z.ZodError, prefix?: string): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid settings";
  const path = [...(prefix === undefined ? [] : [prefix]), ...issue.path.map(String)].join(".");
  return path === "" ? issue.message : `${path}: ${issue.message}`;
}
