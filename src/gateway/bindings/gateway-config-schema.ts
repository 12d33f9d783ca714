/**
 * The shape of the gateway's configuration file (`rudder serve --config FILE`):
 * `{"defaults": {...}, "bindings": [...], "budget": {...}}` plus the sections chat sources read
 * (`telegram`, `slack`, `discord`: objects, checked by their owners). A binding maps channel
 * patterns to a folder, engine, model, system-prompt addition, Claude Code settings, worktree
 * isolation, budget and share of `--max-live`; `defaults` holds the same keys but `name` and
 * `match`. Unknown keys are refused everywhere but inside `settings` (Claude Code's own keys).
 */
import * as v from "valibot";
import { CHANNEL_ID_PATTERN } from "../channel-source.js";
import { BudgetSchema } from "./budget-schema.js";
import { jsonObject } from "./json-object.js";

/** A channel pattern: a channel id in which `*` stands for any run of characters. */
const PATTERN = /^[A-Za-z0-9._:*-]{1,128}$/;

const text = (what: string) =>
  v.pipe(v.string(`must be ${what}`), v.minLength(1, "must not be empty"));

const ruleList = v.array(v.string("must be a rule string"), "must be an array of rule strings");

/**
 * Claude Code's settings keys a binding hands its agents (`--settings`), merged over the
 * folder's own settings files as Claude Code merges a flag-given file. `permissions` and
 * `sandbox` are checked here; other keys are the engine's to read.
 */
const SettingsSchema = jsonObject(
  v.looseObject(
    {
      permissions: v.optional(
        jsonObject(
          v.strictObject(
            {
              allow: v.optional(ruleList),
              ask: v.optional(ruleList),
              deny: v.optional(ruleList),
              defaultMode: v.optional(v.string("must be a string")),
              additionalDirectories: v.optional(
                v.array(v.string("must be a folder"), "must be an array of folders"),
              ),
            },
            "must be an object",
          ),
        ),
      ),
      sandbox: v.optional(jsonObject(v.looseObject({}))),
      env: v.optional(jsonObject(v.record(v.string(), v.string("must be a string")))),
    },
    "must be an object",
  ),
);

/** The keys a binding and `defaults` share. */
const bindingEntries = {
  cwd: v.optional(text("a folder")),
  engine: v.optional(v.picklist(["rudder", "claude"], 'must be "rudder" or "claude"')),
  model: v.optional(text("a model name")),
  /** The models `/model` may switch a channel to (its `model` always may); absent: any. */
  models: v.optional(v.array(text("a model name"), "must be an array of model names")),
  systemPrompt: v.optional(v.string("must be a string")),
  settings: v.optional(SettingsSchema),
  isolation: v.optional(v.literal("worktree", 'must be "worktree"')),
  budget: v.optional(BudgetSchema),
  maxLive: v.optional(
    v.pipe(
      v.number("must be a whole number"),
      v.integer("must be a whole number"),
      v.minValue(0, "must be at least 0"),
    ),
  ),
};

export const BindingDefaultsSchema = jsonObject(
  v.strictObject(bindingEntries, "must be an object"),
);

export const BindingSchema = jsonObject(
  v.strictObject(
    {
      name: v.pipe(
        text("a name"),
        v.regex(CHANNEL_ID_PATTERN, "must be letters, digits, '.', '_', ':' or '-'"),
      ),
      match: v.pipe(
        v.array(
          v.pipe(
            text("a channel pattern"),
            v.regex(PATTERN, "must be a channel id, with * for any characters"),
          ),
          "must be an array of channel patterns",
        ),
        v.minLength(1, "must name at least one channel pattern"),
      ),
      /**
       * Who may talk in the binding's channels, in place of the chat source's allow-list:
       * user ids, chat or channel ids, and `role:<id>` for a sender's role (Discord).
       */
      allow: v.optional(v.array(text("a user, chat or role:<id>"), "must be an array of ids")),
      ...bindingEntries,
    },
    "must be an object",
  ),
);

/** A section a chat source owns: an object whose content that source checks. */
const sourceSection = v.optional(jsonObject(v.record(v.string(), v.unknown())));

export const GatewayConfigSchema = jsonObject(
  v.strictObject(
    {
      $schema: v.optional(v.string("must be a string")),
      defaults: v.optional(BindingDefaultsSchema),
      bindings: v.optional(v.array(BindingSchema, "must be an array of bindings")),
      budget: v.optional(BudgetSchema),
      telegram: sourceSection,
      slack: sourceSection,
      discord: sourceSection,
    },
    "must be a JSON object",
  ),
  "must be a JSON object",
);

export type BindingDefaultsConfig = v.InferOutput<typeof BindingDefaultsSchema>;
export type BindingConfig = v.InferOutput<typeof BindingSchema>;
export type GatewayConfig = v.InferOutput<typeof GatewayConfigSchema>;
