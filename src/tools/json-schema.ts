import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";

/**
 * The JSON Schema a model is shown for a tool's input, derived from its
 * valibot schema. Input-side, so unknown fields are not forbidden (they are
 * stripped when the input is parsed), and without the `$schema` key, which
 * only adds noise. A schema with no JSON Schema form throws: a programming
 * error, caught when the tools are built.
 */
export function toolJsonSchema(schema: GenericSchema): Record<string, unknown> {
  const { $schema: _, ...rest } = toJsonSchema(schema, { typeMode: "input" });
  return rest;
}
