/**
 * The model each channel switched to with `/model <name>`, within what its binding allows
 * (its `model`, and its `models` list when it has one; any name when it has none). Kept by
 * this worker while it runs; a channel whose choice is gone uses its binding's model again.
 */
import type { ResolvedBinding } from "./resolved-binding.js";

export class ChannelModels {
  readonly #chosen = new Map<string, { binding: string; model: string }>();

  /** The channel's model now: its choice while its binding is the one it chose in, else the binding's. */
  modelOf(channelId: string, binding: ResolvedBinding): string | undefined {
    const chosen = this.#chosen.get(channelId);
    if (chosen === undefined || chosen.binding !== binding.name) return binding.model;
    if (!allowed(binding, chosen.model)) return binding.model;
    return chosen.model;
  }

  /** Chooses `model` for the channel, or says in one line why the binding refuses it. */
  choose(channelId: string, binding: ResolvedBinding, model: string): string | null {
    if (!allowed(binding, model)) {
      const choices = [binding.model, ...(binding.models ?? [])].filter(
        (name): name is string => name !== undefined,
      );
      return `the binding "${binding.name}" allows the models ${choices.join(", ")}, not "${model}"`;
    }
    if (model === binding.model) this.#chosen.delete(channelId);
    else this.#chosen.set(channelId, { binding: binding.name, model });
    return null;
  }
}

function allowed(binding: ResolvedBinding, model: string): boolean {
  return binding.models === undefined || model === binding.model || binding.models.includes(model);
}
