import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { loadProjectInstructions } from "../agent/project-instructions.js";
import { randomUUID } from "../agent/random-uuid.js";
import type { SessionOptions } from "../agent/session.js";
import { loadSettings } from "../agent/settings.js";
import {
  composeSystemPrompt,
  defaultSystemPrompt,
  projectInstructionsSection,
} from "../agent/system-prompt.js";
import type { Confirm } from "../agent/tool-dispatch.js";
import { BackgroundManager } from "../background/background-manager.js";
import { createHookRunner, type HookRegistry } from "../hooks/hook-registry.js";
import type { McpRelay } from "../mcp/host-relay-transport.js";
import { loadMcpConfig } from "../mcp/load-mcp-config.js";
import type { McpServerStatus } from "../mcp/mcp-servers.js";
import type { Message, Model } from "../model/types.js";
import { rulesFromToolLists, validatePermissionRules } from "../permissions/parse-rule.js";
import type { PermissionRules } from "../permissions/types.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import {
  surfaceToolName,
  TOOL_SURFACES,
  type ToolSurface,
  toolsForSurface,
  withoutDeniedTools,
} from "../tools/claude-code-tools.js";
import { createDefaultTools } from "../tools/default-tools.js";
import { createSendFileTool } from "../tools/send-file-tool.js";
import { booleanFlag, type FlagSpecs, listFlag, type ParsedArgs, stringFlag } from "./args.js";
import { createMcpStarter } from "./setup/mcp-starter.js";
import { setupModel } from "./setup/setup-model.js";
import { setupSandbox } from "./setup/setup-sandbox.js";

export { DEMO_MODEL_NAME } from "./setup/setup-model.js";

/** Claude Code's MCP flags, which every agent command takes. */
export const MCP_FLAGS: FlagSpecs = {
  "mcp-config": { type: "list" },
  "strict-mcp-config": { type: "boolean" },
};

/** `--no-project-instructions`, which every agent command takes. */
export const PROJECT_INSTRUCTIONS_FLAGS: FlagSpecs = {
  "no-project-instructions": { type: "boolean" },
};
/** `--no-sandbox`, which every agent command takes. */
export const SANDBOX_FLAGS: FlagSpecs = { "no-sandbox": { type: "boolean" } };
/** `--tool-names claude|rudder`, which every agent command takes. */
export const TOOL_NAMES_FLAGS: FlagSpecs = { "tool-names": { type: "string" } };

/**
 * The agent's own flags, which `rudder run` and `rudder chat` both take: its model, settings,
 * folder, tool lists and system prompt, its MCP servers, project instructions, sandbox and
 * tool names.
 */
export const AGENT_FLAGS: FlagSpecs = {
  model: { type: "string" },
  settings: { type: "string" },
  cwd: { type: "string" },
  allowedTools: { type: "list" },
  "allowed-tools": { type: "list" },
  disallowedTools: { type: "list" },
  "disallowed-tools": { type: "list" },
  "system-prompt": { type: "string" },
  "append-system-prompt": { type: "string" },
  ...MCP_FLAGS,
  ...PROJECT_INSTRUCTIONS_FLAGS,
  ...SANDBOX_FLAGS,
  ...TOOL_NAMES_FLAGS,
};

export interface AgentSetupFlags {
  model?: string;
  settingsFile?: string;
  cwd?: string;
  allowedTools?: string[];
  disallowedTools?: string[];
  systemPrompt?: string;
  appendSystemPrompt?: string;
  maxTurns?: number;
  /** `--max-budget-usd`: the session stops at its next model call once it spent this. */
  maxBudgetUsd?: number;
  sessionId?: string;
  history?: Message[];
  confirm?: Confirm;
  /** `--mcp-config` values: files (relative to where rudder was started) or inline JSON. */
  mcpConfig?: string[];
  /** `--strict-mcp-config`: no MCP servers but those of `--mcp-config`. */
  strictMcpConfig?: boolean;
  /** `--no-project-instructions`: no CLAUDE.md / AGENTS.md in the system prompt. */
  noProjectInstructions?: boolean;
  /**
   * Leave the MCP servers to `startMcpServers` (stream-json: a host may add servers in its
   * `initialize` request, which is read after the setup).
   */
  deferMcpStart?: boolean;
  /** `--no-sandbox`: bash commands run unconfined (and the strict gate judges them). */
  noSandbox?: boolean;
  /** Whose names and input shapes the built-in tools have (`--tool-names`); default rudder's. */
  toolNames?: ToolSurface;
  /**
   * `--send-file-tool BYTES` (the gateway gives it its rudder agents): the `send_file` tool,
   * files up to BYTES, beside the five. Its name is `send_file` on every tool surface.
   */
  sendFileMaxBytes?: number;
}

export interface AgentSetup {
  options: SessionOptions;
  /**
   * `sandbox.askBeforeDestroying` (default on): a front end whose person can answer sets
   * the session's `askBeforeDestroying` from it. Set in `options` when `flags.confirm` is given.
   */
  askBeforeDestroying: boolean;
  model: Model;
  workspace: string;
  warnings: string[];
  /** The configured MCP servers and whether each started, for `system/init`. */
  mcpServers: McpServerStatus[];
  /** The session's hooks, to which a host may add callbacks. */
  hooks: HookRegistry;
  /** The project instruction files in the system prompt, in load order (`system/init`). */
  instructionFiles: string[];
  /**
   * The system prompt for `base` and `append` as a host gives them (stream-json
   * `initialize`): the project instructions stay between them.
   */
  systemPromptWith(base: string | undefined, append: string | undefined): string;
  /** What confines the bash tool's commands (for `system/init`). */
  sandbox: Sandbox;
  /**
   * With `deferMcpStart`: starts the configured MCP servers and `extraServers` (an
   * `mcpServers` object, merged last, as one more `--mcp-config`), adding their tools to
   * `options.tools` and their statuses to `mcpServers`. Once only. Resolves with warnings.
   * `relay` reaches the host's in-process (`type: "sdk"`) servers.
   */
  startMcpServers(extraServers: unknown, source: string, relay?: McpRelay): Promise<string[]>;
  /** A model by name (an alias, an id or `demo`) with the setup's credentials, for `set_model`. */
  createModel(name: string): Model | { error: string };
  /** Stops what the setup started (the MCP servers). Call it when the session ends. */
  close(): Promise<void>;
}

export type AgentSetupResult = { ok: true; setup: AgentSetup } | { ok: false; error: string };

function mergeRules(first: PermissionRules, second: PermissionRules): PermissionRules {
  return {
    allow: [...first.allow, ...second.allow],
    ask: [...first.ask, ...second.ask],
    deny: [...first.deny, ...second.deny],
  };
}

/** A `--settings` path is relative to where the user typed it, not to `--cwd`. */
function settingsArgument(value: string): string {
  return value.trimStart().startsWith("{") ? value : resolve(value);
}

/**
 * Everything a session needs, from flags, the environment and the settings
 * files: the workspace, the model, the tools (MCP servers' included: they are
 * started here, and the MCP SDK is loaded only when one is configured), the
 * permission rules and the hooks. Failures are one-line errors for the user.
 */
export async function createAgentSetup(
  flags: AgentSetupFlags,
  env: NodeJS.ProcessEnv,
): Promise<AgentSetupResult> {
  let workspace: string;
  try {
    workspace = realpathSync(resolve(flags.cwd ?? process.cwd()));
  } catch {
    return { ok: false, error: `workspace folder not found: ${flags.cwd}` };
  }

  const home = env.HOME ?? homedir();
  const loaded = await loadSettings({
    cwd: workspace,
    home,
    ...(flags.settingsFile === undefined
      ? {}
      : { settingsFile: settingsArgument(flags.settingsFile) }),
  });
  if (loaded.errors.length > 0) return { ok: false, error: loaded.errors.join("; ") };
  const { settings, warnings } = loaded;
  const settingsEnv = { ...settings.env, ...env };

  const models = setupModel(flags.model, settings, settingsEnv);
  if ("error" in models) return { ok: false, error: models.error };
  const { model, createModel, budgetFor } = models;

  const toolRules = rulesFromToolLists(flags.allowedTools ?? [], flags.disallowedTools ?? []);
  const rules = mergeRules(settings.permissions, toolRules);
  for (const problem of validatePermissionRules(rules)) warnings.push(problem);

  const mcpConfig = await loadMcpConfig({
    workspace,
    env: settingsEnv,
    configArgs: flags.mcpConfig ?? [],
    baseDir: process.cwd(),
    strict: flags.strictMcpConfig === true,
    settingsServers: settings.mcpServers ?? {},
  });
  if (mcpConfig.errors.length > 0) return { ok: false, error: mcpConfig.errors.join("; ") };
  warnings.push(...mcpConfig.warnings);

  const sessionId = flags.sessionId ?? randomUUID();
  const surface = flags.toolNames ?? "rudder";
  const hooks = createHookRunner({
    commandHooks: settings.hooks,
    cwd: workspace,
    sessionId,
  });
  const instructions =
    flags.noProjectInstructions === true || settings.projectInstructions === false
      ? { files: [], warnings: [] }
      : loadProjectInstructions({ workspace, home });
  warnings.push(...instructions.warnings);
  const instructionsText = projectInstructionsSection(instructions.files);
  const systemPromptWith = (base: string | undefined, append: string | undefined): string =>
    composeSystemPrompt({
      base:
        base ??
        defaultSystemPrompt(workspace, new Date(), (name) => surfaceToolName(surface, name)),
      instructions: instructionsText,
      append,
    });

  const sandbox = setupSandbox({
    settings,
    workspace,
    env,
    settingsEnv,
    noSandbox: flags.noSandbox === true,
    warnings,
  });
  if ("error" in sandbox) return { ok: false, error: sandbox.error };
  const tools = withoutDeniedTools(
    [
      ...toolsForSurface(createDefaultTools({ sandbox }), surface),
      ...(flags.sendFileMaxBytes === undefined ? [] : [createSendFileTool(flags.sendFileMaxBytes)]),
    ],
    rules.deny,
  );
  const mcp = createMcpStarter(mcpConfig.servers, tools, workspace, settingsEnv);
  if (flags.deferMcpStart !== true) warnings.push(...(await mcp.start(undefined, "")));

  const askBeforeDestroying = settings.sandbox?.askBeforeDestroying !== false;
  const options: SessionOptions = {
    model,
    tools,
    rules,
    workspace,
    home,
    // The gate lets a confined command run unasked (`autoAllowBashIfSandboxed`); one that
    // runs unconfined (excluded, sandbox off or unavailable) is judged strictly.
    bashSandboxed: (command) => sandbox.policy.autoAllowBash && sandbox.confines(command),
    hooks,
    background: new BackgroundManager({ workspace, sandbox }),
    systemPrompt: systemPromptWith(flags.systemPrompt, flags.appendSystemPrompt),
    sessionId,
    contextBudget: budgetFor,
    ...(flags.history === undefined ? {} : { history: flags.history }),
    ...(flags.confirm === undefined ? {} : { confirm: flags.confirm }),
    ...(flags.confirm !== undefined && askBeforeDestroying ? { askBeforeDestroying: true } : {}),
    ...(flags.maxTurns === undefined ? {} : { maxTurns: flags.maxTurns }),
    ...(flags.maxBudgetUsd === undefined ? {} : { maxBudgetUsd: flags.maxBudgetUsd }),
  };
  return {
    ok: true,
    setup: {
      options,
      askBeforeDestroying,
      model,
      workspace,
      warnings,
      mcpServers: mcp.statuses,
      hooks,
      instructionFiles: instructions.files.map((file) => file.path),
      systemPromptWith,
      sandbox,
      startMcpServers: mcp.start,
      createModel,
      close: async () => {
        await mcp.close();
        sandbox.close();
      },
    },
  };
}

/**
 * The setup flags every agent command shares (`run`, `run -p`, `chat`), read
 * from parsed arguments; absent flags stay absent.
 */
export function setupFlagsFromArgs(args: ParsedArgs): AgentSetupFlags {
  const flags: AgentSetupFlags = {
    allowedTools: [...listFlag(args, "allowedTools"), ...listFlag(args, "allowed-tools")],
    disallowedTools: [...listFlag(args, "disallowedTools"), ...listFlag(args, "disallowed-tools")],
    mcpConfig: listFlag(args, "mcp-config"),
    strictMcpConfig: booleanFlag(args, "strict-mcp-config"),
    noProjectInstructions: booleanFlag(args, "no-project-instructions"),
    noSandbox: booleanFlag(args, "no-sandbox"),
  };
  const strings = {
    model: "model",
    settingsFile: "settings",
    cwd: "cwd",
    systemPrompt: "system-prompt",
    appendSystemPrompt: "append-system-prompt",
  } as const;
  for (const [key, flag] of Object.entries(strings)) {
    const value = stringFlag(args, flag);
    if (value !== undefined) flags[key as keyof typeof strings] = value;
  }
  return flags;
}

/**
 * `--tool-names`: the flag's surface, `fallback` when it is absent (each command has its
 * own default), or an error for the user.
 */
export function toolNamesFlag(args: ParsedArgs, fallback: ToolSurface): ToolSurface | Error {
  const raw = stringFlag(args, "tool-names");
  if (raw === undefined) return fallback;
  const surface = TOOL_SURFACES.find((name) => name === raw);
  return surface ?? new Error(`--tool-names must be claude or rudder (got "${raw}")`);
}

/** `--max-turns`: absent, a positive whole number, or an error for the user. */
export function maxTurnsFlag(args: ParsedArgs): number | undefined | Error {
  const raw = stringFlag(args, "max-turns");
  if (raw === undefined) return undefined;
  const value = Number(raw);
  return Number.isInteger(value) && value > 0
    ? value
    : new Error(`--max-turns needs a positive whole number (got "${raw}")`);
}

/** `--max-budget-usd`: absent, a positive number of US dollars, or an error for the user. */
export function maxBudgetUsdFlag(args: ParsedArgs): number | undefined | Error {
  const raw = stringFlag(args, "max-budget-usd");
  if (raw === undefined) return undefined;
  const value = Number(raw);
  return raw.trim() !== "" && Number.isFinite(value) && value > 0
    ? value
    : new Error(`--max-budget-usd needs a positive number of US dollars (got "${raw}")`);
}

/** The sandbox as `system/init` shows it: `enabled`, `status` (`on`, `off`, `unavailable`), why not, the network. */
export function sandboxInfo(sandbox: Sandbox): {
  enabled: boolean;
  status: string;
  reason?: string;
  network: string;
} {
  const status = sandbox.status();
  return {
    enabled: status.state === "on",
    status: status.state,
    ...(status.state === "unavailable" ? { reason: status.reason } : {}),
    network: sandbox.policy.network.kind,
  };
}
