/**
 * What a binding's agents are, as `/status`, `GET /api/bindings` and the page's header say it:
 * the folder, the engine, the model as the engine works it out, whether rudder's sandbox
 * confines their commands. Worked out by the caller (`GatewayOptions.infoFor`), once per
 * binding and model until a reload replaces the binding.
 */
import type { AgentInfo } from "../gateway-options.js";
import type { GatewayBindings } from "./bindings.js";
import type { ChannelModels } from "./channel-models.js";
import type { ResolvedBinding } from "./resolved-binding.js";

/** A channel's agents: its binding's name and what they are. */
export interface ChannelAgentInfo extends AgentInfo {
  binding: string;
}

export type InfoFor = (binding: ResolvedBinding, model: string | undefined) => Promise<AgentInfo>;

export class BindingInfo {
  readonly bindings: GatewayBindings;
  readonly models: ChannelModels;
  readonly #infoFor: InfoFor;
  readonly #known = new WeakMap<ResolvedBinding, Map<string, Promise<AgentInfo>>>();

  constructor(bindings: GatewayBindings, models: ChannelModels, infoFor: InfoFor | undefined) {
    this.bindings = bindings;
    this.models = models;
    this.#infoFor =
      infoFor ??
      (async (binding, model) => ({
        cwd: binding.cwd,
        engine: binding.engine,
        model: model ?? "default",
        sandbox: false,
      }));
  }

  /** The binding's agents with `model` (default its own). */
  forBinding(binding: ResolvedBinding, model = binding.model): Promise<AgentInfo> {
    let known = this.#known.get(binding);
    if (known === undefined) {
      known = new Map();
      this.#known.set(binding, known);
    }
    const key = model ?? "";
    let info = known.get(key);
    if (info === undefined) {
      info = this.#infoFor(binding, model);
      known.set(key, info);
    }
    return info;
  }

  /** The channel's agents now: its binding, and its `/model` choice. */
  async forChannel(channelId: string): Promise<ChannelAgentInfo> {
    const binding = this.bindings.bindingFor(channelId);
    const info = await this.forBinding(binding, this.models.modelOf(channelId, binding));
    return { binding: binding.name, ...info };
  }
}
