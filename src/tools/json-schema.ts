import { z } from "zod";

/**
 * The JSON Schema a model is shown for a tool's input, derived from its zod
 * schema. Input-side, so unknown fields are not forbidden (they are stripped
 * when the input is parsed), and without the `$schema` key the API ignores.
 */
export function toolJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<
    string,
    unknown
  >;
  return rest;
}
