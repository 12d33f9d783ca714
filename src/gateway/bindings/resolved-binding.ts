/**
 * What a channel's agent runs with, resolved from its binding, the file's `defaults` and the
 * command line's flags (in that order: the first that sets a key gives it).
 */
import type { Budget } from "./budget-schema.js";
import type { BindingDefaultsConfig } from "./gateway-config-schema.js";

/** The name of the binding unmatched channels use: the file's `defaults` (or the flags). */
export const DEFAULTS_BINDING = "defaults";

export type EngineName = "rudder" | "claude";

/** What the command line gives: the folder, the engine, the model (undefined: the engine's). */
export interface BindingFallback {
  cwd: string;
  engine: EngineName;
  model?: string | undefined;
}

export interface ResolvedBinding {
  /** The binding's name; `defaults` for channels no binding matches. */
  name: string;
  /** Its patterns; empty for `defaults`. */
  match: string[];
  /** Absolute. */
  cwd: string;
  engine: EngineName;
  /** Undefined: the engine's own choice (rudder's settings and environment; Claude Code's). */
  model: string | undefined;
  /** The models `/model` may choose besides `model`; undefined: any. */
  models: string[] | undefined;
  /** Appended to the agent's system prompt (after the gateway's own addition). */
  systemPrompt: string | undefined;
  /** Claude Code settings handed to the agent as `--settings`, over the folder's own. */
  settings: Record<string, unknown> | undefined;
  isolation: "worktree" | undefined;
  /** Kept agent processes of this binding's channels at most (a share of `--max-live`). */
  maxLive: number | undefined;
  /** This binding's own limits (not inherited from `defaults`); undefined: none. */
  budget: Budget | undefined;
  /**
   * Who may talk in its channels (user, chat and `role:<id>` ids), in place of the chat
   * source's allow-list; the binding's own; undefined: the source's list applies.
   */
  allow: string[] | undefined;
}

/**
 * A binding's values over `defaults` over the flags. `budget` and `maxLive` are the
 * binding's own (a pool of its channels), never inherited: `defaults`' apply to the channels
 * no binding matches.
 */
export function resolveBinding(
  name: string,
  match: string[],
  own: BindingDefaultsConfig & { allow?: string[] | undefined },
  defaults: BindingDefaultsConfig,
  fallback: BindingFallback,
): ResolvedBinding {
  return {
    name,
    match,
    cwd: own.cwd ?? defaults.cwd ?? fallback.cwd,
    engine: own.engine ?? defaults.engine ?? fallback.engine,
    model: own.model ?? defaults.model ?? fallback.model,
    models: own.models ?? defaults.models,
    systemPrompt: own.systemPrompt ?? defaults.systemPrompt,
    settings: own.settings ?? defaults.settings,
    isolation: own.isolation ?? defaults.isolation,
    maxLive: own.maxLive,
    budget: own.budget,
    allow: own.allow,
  };
}
