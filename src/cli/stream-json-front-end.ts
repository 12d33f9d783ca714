/**
 * The stream-json front end over an agent setup: what `system/init` reports, the host's
 * controls (`initialize` adding MCP servers and hook callbacks, model and mode switches), and
 * the `Session` it makes with the host's system prompt and the stored transcript.
 */
import { Session } from "../agent/session.js";
import { packageVersion } from "../gateway/http/package-info.js";
import { jsonHookCallback } from "../hooks/json-hook-callback.js";
import { HOOK_EVENTS } from "../hooks/types.js";
import type { OutputLine } from "../protocol/output-lines.js";
import type { PermissionMode } from "../protocol/permission-mode.js";
import { StreamJsonFrontEnd } from "../protocol/stream-json-front-end.js";
import { type AgentSetup, sandboxInfo } from "./agent-setup.js";
import { type StoredSession, storedSessionOptions } from "./stored-session.js";
import { streamJsonControls } from "./stream-json-controls.js";

export interface StreamJsonHostOptions {
  permissionMode: PermissionMode;
  /** `--permission-prompt-tool stdio`: asks go to the host as `can_use_tool` requests. */
  permissionPrompt: boolean;
  includePartialMessages: boolean;
  includeHookEvents: boolean;
  awaitInitialize: boolean;
  /** `--ask-before-waking`: a wake-up waits for the host's yes (the gateway's budgets). */
  askBeforeWaking: boolean;
  env: NodeJS.ProcessEnv;
  write: (line: OutputLine) => void;
  warn: (message: string) => void;
}

function apiKeySource(env: NodeJS.ProcessEnv): string {
  if (env.ANTHROPIC_API_KEY?.trim()) return "ANTHROPIC_API_KEY";
  if (env.ANTHROPIC_AUTH_TOKEN?.trim()) return "ANTHROPIC_AUTH_TOKEN";
  return "none";
}

export function createStreamJsonFrontEnd(
  setup: AgentSetup,
  resolved: StoredSession,
  host: StreamJsonHostOptions,
): StreamJsonFrontEnd {
  const { warn } = host;
  const switchable = streamJsonControls(setup);

  const frontEnd: StreamJsonFrontEnd = new StreamJsonFrontEnd({
    info: {
      sessionId: resolved.sessionId,
      cwd: setup.workspace,
      model: setup.model.name,
      tools: setup.options.tools.map((tool) => tool.name),
      mcpServers: setup.mcpServers,
      sandbox: sandboxInfo(setup.sandbox),
      version: packageVersion(),
      apiKeySource: apiKeySource(host.env),
      instructionFiles: setup.instructionFiles,
    },
    write: host.write,
    permissionMode: host.permissionMode,
    permissionPrompt: host.permissionPrompt,
    includePartialMessages: host.includePartialMessages,
    includeHookEvents: host.includeHookEvents,
    awaitInitialize: host.awaitInitialize,
    askBeforeWaking: host.askBeforeWaking,
    persist: resolved.persist,
    warn,
    prepare: async (initializeServers) => {
      const notes = await setup.startMcpServers(
        initializeServers,
        "initialize (mcpServers)",
        (name, message, signal) => frontEnd.relayMcpMessage(name, message, signal),
      );
      for (const note of notes) warn(note);
      return {
        tools: setup.options.tools.map((tool) => tool.name),
        mcpServers: setup.mcpServers,
      };
    },
    controls: switchable.controls,
    addHookCallback: (callback, call) => {
      const event = HOOK_EVENTS.find((name) => name === callback.event);
      if (event === undefined) return false;
      setup.hooks.on(
        event,
        jsonHookCallback(callback.name, call, { blockOnFailure: callback.blockOnFailure }),
        callback.matcher,
        callback.timeoutSeconds === undefined ? {} : { timeoutSeconds: callback.timeoutSeconds },
      );
      return true;
    },
    createSession: (overrides) => {
      const prompt =
        overrides.systemPrompt === undefined
          ? [setup.options.systemPrompt, overrides.appendSystemPrompt]
              .filter((part) => part !== undefined && part !== "")
              .join("\n\n")
          : setup.systemPromptWith(overrides.systemPrompt, overrides.appendSystemPrompt);
      return new Session({
        ...setup.options,
        model: switchable.model,
        confirm: overrides.confirm,
        // A host with a permission prompt has a person (or a page) behind it.
        ...(host.permissionPrompt && setup.askBeforeDestroying
          ? { askBeforeDestroying: true }
          : {}),
        systemPrompt: prompt,
        ...storedSessionOptions(resolved),
      });
    },
  });
  return frontEnd;
}
