/**
 * The setup's model: the one named (by flag, `RUDDER_MODEL` or the settings), a way to make
 * another by name for a `set_model` switch, and the context budget of each model. An unknown
 * name, missing credentials or a bad window setting is one line for the user.
 */
import { type ContextBudget, contextBudgetFrom } from "../../agent/context-budget.js";
import type { RudderSettings } from "../../agent/settings.js";
import { createAnthropicModel } from "../../model/anthropic-model.js";
import { createDemoModel } from "../../model/demo-model.js";
import { modelConfigFromEnv, modelNameFromEnv } from "../../model/model-config.js";
import type { Model } from "../../model/types.js";

export const DEMO_MODEL_NAME = "demo";

export interface SetupModel {
  model: Model;
  /** A model by name (an alias, an id or `demo`) with the setup's credentials. */
  createModel(name: string | undefined): Model | { error: string };
  /** The context budget of a model by name (the window follows a `set_model` switch). */
  budgetFor(name: string): ContextBudget;
}

/** `settingsEnv`: the settings' `env` under the process environment (which wins). */
export function setupModel(
  requested: string | undefined,
  settings: RudderSettings,
  settingsEnv: NodeJS.ProcessEnv,
): SetupModel | { error: string } {
  const createModel = (name: string | undefined): Model | { error: string } => {
    if (name === DEMO_MODEL_NAME) return createDemoModel();
    const config = modelConfigFromEnv(settingsEnv, name === undefined ? {} : { model: name });
    return config.ok ? createAnthropicModel(config.options) : { error: config.error };
  };
  const model = createModel(requested ?? settingsEnv.RUDDER_MODEL ?? settings.model);
  if ("error" in model) return model;

  const compactionSettings = {
    ...(settings.autoCompactEnabled === undefined
      ? {}
      : { autoCompactEnabled: settings.autoCompactEnabled }),
    ...(settings.autoCompactWindow === undefined
      ? {}
      : { autoCompactWindow: settings.autoCompactWindow }),
  };
  const budget = contextBudgetFrom(model.name, settingsEnv, compactionSettings);
  if ("error" in budget) return budget;
  // The environment was checked above, so another model's budget has no error to report.
  const budgetFor = (name: string): ContextBudget => {
    const other = contextBudgetFrom(name, settingsEnv, compactionSettings);
    return "error" in other ? budget : other;
  };
  return { model, createModel, budgetFor };
}

/** The name `setupModel` gives its model, without making it (no credentials needed). */
export function setupModelName(
  requested: string | undefined,
  settings: RudderSettings,
  settingsEnv: NodeJS.ProcessEnv,
): string {
  const name = requested ?? settingsEnv.RUDDER_MODEL ?? settings.model;
  if (name === DEMO_MODEL_NAME) return name;
  return modelNameFromEnv(settingsEnv, name === undefined ? {} : { model: name });
}
