import type { Model, ModelOutcome, ModelRequest } from "../model/types.js";

/** Builds the model for a name the host asked for, or says why it cannot. */
export type CreateModel = (name: string) => Model | { error: string };

/**
 * The session's model, switchable between turns (`set_model`): each call goes
 * to the model chosen last, so a switch during a turn takes effect at its next
 * model call, as in Claude Code. `default` (or no name) goes back to the model
 * the session started with.
 */
export class ModelSwitch implements Model {
  readonly #initial: Model;
  readonly #create: CreateModel;
  #current: Model;

  constructor(initial: Model, create: CreateModel) {
    this.#initial = initial;
    this.#create = create;
    this.#current = initial;
  }

  get name(): string {
    return this.#current.name;
  }

  /** Switches to `name`; the model id now in use, or an error (the model is unchanged). */
  select(name: string | undefined): { ok: true; model: string } | { ok: false; error: string } {
    if (name === undefined || name === "default") {
      this.#current = this.#initial;
      return { ok: true, model: this.#current.name };
    }
    const created = this.#create(name);
    if ("error" in created) return { ok: false, error: created.error };
    this.#current = created;
    return { ok: true, model: created.name };
  }

  complete(request: ModelRequest): Promise<ModelOutcome> {
    return this.#current.complete(request);
  }
}
