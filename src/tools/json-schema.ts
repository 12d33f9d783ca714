import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";

const derived = new WeakMap<GenericSchema, Record<string, unknown>>();

/**
 * The JSON Schema a model is shown for a tool's input, derived from its
 * valibot schema once and kept. Input-side, so unknown fields are not forbidden
 * (they are stripped when the input is parsed), and without the `$schema` key,
 * which only adds noise. A schema with no JSON Schema form throws: a
 * programming error, caught by the tools' tests. Tools read it through a getter
 * (`get jsonSchema()`), so a tool that is never shown (rudder's own names, when
 * a run shows Claude Code's) costs nothing at start-up.
 */
export function toolJsonSchema(schema: GenericSchema): Record<string, unknown> {
  let jsonSchema = derived.get(schema);
  if (jsonSchema === undefined) {
    const { $schema: _, ...rest } = toJsonSchema(schema, { typeMode: "input" });
    jsonSchema = rest;
    derived.set(schema, jsonSchema);
  }
  return jsonSchema;
}
