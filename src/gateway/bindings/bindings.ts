/**
 * The gateway's bindings as they stand now: which binding each channel uses (the first whose
 * pattern matches its id; `defaults` when none does), the list for `GET /api/bindings`, the
 * gateway-wide budget, and a new configuration put in place by a reload (listeners are told).
 */
import type { Budget } from "./budget-schema.js";
import { channelPattern } from "./channel-pattern.js";
import type { GatewayConfig } from "./gateway-config-schema.js";
import type { LoadedConfig } from "./load-gateway-config.js";
import {
  type BindingFallback,
  DEFAULTS_BINDING,
  type ResolvedBinding,
  resolveBinding,
} from "./resolved-binding.js";

interface Compiled {
  loaded: LoadedConfig | undefined;
  /** The bindings in the file's order, each with its patterns compiled. */
  bindings: Array<{ binding: ResolvedBinding; patterns: RegExp[] }>;
  defaults: ResolvedBinding;
}

function compile(loaded: LoadedConfig | undefined, fallback: BindingFallback): Compiled {
  const config: GatewayConfig = loaded?.config ?? {};
  const defaultsConfig = config.defaults ?? {};
  const defaults = resolveBinding(DEFAULTS_BINDING, [], defaultsConfig, {}, fallback);
  const bindings = (config.bindings ?? []).map((entry) => {
    const { name, match, ...own } = entry;
    return {
      binding: resolveBinding(name, match, own, defaultsConfig, fallback),
      patterns: match.map(channelPattern),
    };
  });
  return { loaded, bindings, defaults };
}

function bindingIn(compiled: Compiled, channelId: string): ResolvedBinding {
  for (const { binding, patterns } of compiled.bindings) {
    if (patterns.some((pattern) => pattern.test(channelId))) return binding;
  }
  return compiled.defaults;
}

/** The bindings as they were at one moment. */
export interface BindingsSnapshot {
  bindingFor(channelId: string): ResolvedBinding;
}

export class GatewayBindings {
  readonly fallback: BindingFallback;
  #compiled: Compiled;
  readonly #listeners: Array<(previous: BindingsSnapshot) => void> = [];

  /** `loaded` undefined: no configuration file, every channel uses the flags (`defaults`). */
  constructor(loaded: LoadedConfig | undefined, fallback: BindingFallback) {
    this.fallback = fallback;
    this.#compiled = compile(loaded, fallback);
  }

  /** The binding `channelId` uses now. */
  bindingFor(channelId: string): ResolvedBinding {
    return bindingIn(this.#compiled, channelId);
  }

  /** The binding of this name (`defaults` included), if there is one. */
  named(name: string): ResolvedBinding | undefined {
    if (name === DEFAULTS_BINDING) return this.#compiled.defaults;
    return this.#compiled.bindings.find(({ binding }) => binding.name === name)?.binding;
  }

  /** Every binding in the file's order, then `defaults`. */
  list(): ResolvedBinding[] {
    return [...this.#compiled.bindings.map(({ binding }) => binding), this.#compiled.defaults];
  }

  /** The gateway-wide limits (the file's top-level `budget`). */
  get budget(): Budget | undefined {
    return this.#compiled.loaded?.config.budget;
  }

  /** The configuration in use: the file, its content and hash (undefined without a file). */
  get loaded(): LoadedConfig | undefined {
    return this.#compiled.loaded;
  }

  /** What `bindingFor` answers now, kept by a listener to compare after a reload. */
  get snapshot(): BindingsSnapshot {
    const compiled = this.#compiled;
    return { bindingFor: (channelId) => bindingIn(compiled, channelId) };
  }

  /** Puts a reloaded configuration in place; each listener gets what was in place before. */
  replace(loaded: LoadedConfig): void {
    const previous = this.snapshot;
    this.#compiled = compile(loaded, this.fallback);
    for (const listener of this.#listeners) listener(previous);
  }

  /** `listener` is called after each `replace`, with the bindings before it. */
  onChange(listener: (previous: BindingsSnapshot) => void): void {
    this.#listeners.push(listener);
  }
}
