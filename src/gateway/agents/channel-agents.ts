/**
 * How each channel's agent process is made, from the binding its channel uses now: the engine
 * the caller builds for the binding (`rudder serve` builds rudder or Claude Code in the
 * binding's folder), the model (the channel's `/model` choice or the binding's), the binding's
 * Claude Code settings as `--settings` and its system-prompt addition, and for rudder
 * `--ask-before-waking` (the router's budgets answer). `key` changes exactly
 * when a process made now would differ, so the pool restarts a kept process between turns.
 */
import type { ClaudeProcessOptions } from "../../claude-cli/claude-process-types.js";
import type { GatewayBindings } from "../bindings/bindings.js";
import type { ChannelModels } from "../bindings/channel-models.js";
import type { ResolvedBinding } from "../bindings/resolved-binding.js";
import { type GatewayEngine, processOptions } from "../gateway-options.js";
import { type ChannelToolsServer, channelToolArgs, rudderSendFileArgs } from "./channel-tools.js";

/** What the pool asks of a channel's agent. */
export interface ChannelAgents {
  /** The options of a process made for the channel now. */
  options(channelId: string): ClaudeProcessOptions;
  /** Equal for two moments exactly when `options` would make the same process. */
  key(channelId: string): string;
  /** The binding's name and its share of kept processes (undefined: no share of its own). */
  share(channelId: string): { name: string; maxLive: number | undefined };
}

export interface ChannelAgentsOptions {
  bindings: GatewayBindings;
  models: ChannelModels;
  /** The engine a binding's agents run (its folder and model set by the caller or from it). */
  engineFor: (binding: ResolvedBinding, model: string | undefined) => GatewayEngine;
  dataDir: string;
  /** The channel tools' server (`send_file`) and the largest file sent; absent: no such tools. */
  channelTools?: { server: ChannelToolsServer; maxBytes: number } | undefined;
}

/** The engine of `engine` (the gateway's one) in the binding's folder, with its model. */
export function engineInBinding(
  engine: GatewayEngine | undefined,
  binding: ResolvedBinding,
  model: string | undefined,
): GatewayEngine {
  // No engine: the binary `ClaudeProcess` resolves itself (an empty claudeBin is left out).
  const { model: _engineModel, ...rest } = engine ?? { claudeBin: "" };
  return { ...rest, cwd: binding.cwd, ...(model ? { model } : {}) };
}

export function channelAgents(options: ChannelAgentsOptions): ChannelAgents {
  const { bindings, models } = options;
  const describe = (channelId: string) => {
    const binding = bindings.bindingFor(channelId);
    return { binding, model: models.modelOf(channelId, binding) };
  };
  return {
    options(channelId) {
      const { binding, model } = describe(channelId);
      const base = processOptions(options.engineFor(binding, model), options.dataDir);
      const args = [...(base.extraArgs ?? [])];
      if (binding.settings) args.push("--settings", JSON.stringify(binding.settings));
      if (binding.systemPrompt) args.push("--append-system-prompt", binding.systemPrompt);
      // A rudder agent asks before it wakes itself, so that a budget can hold the wake-up.
      if (binding.engine === "rudder") args.push("--ask-before-waking");
      const tools = options.channelTools;
      if (tools && binding.engine === "rudder") args.push(...rudderSendFileArgs(tools.maxBytes));
      else if (tools) args.push(...channelToolArgs(tools.server, tools.maxBytes));
      return {
        ...base,
        extraArgs: args,
        engineName: binding.engine === "rudder" ? "rudder" : "Claude CLI",
      };
    },
    key(channelId) {
      const { binding, model } = describe(channelId);
      const { cwd, engine, systemPrompt, settings } = binding;
      return JSON.stringify([engine, cwd, model ?? null, systemPrompt ?? null, settings ?? null]);
    },
    share(channelId) {
      const { name, maxLive } = bindings.bindingFor(channelId);
      return { name, maxLive };
    },
  };
}
