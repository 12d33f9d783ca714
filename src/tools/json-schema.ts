import { z } from "zod";

/**
 * The JSON Schema a model is shown for a tool's input, derived from its zod
 * schema. Input-side, so unknown fields are not forbidden (they are stripped
 * when the input is parsed); without the `$schema` key, and without the
 * safe-integer bounds zod adds to every `.int()`, which only add noise.
 */
export function toolJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<
    string,
    unknown
  >;
  return withoutSafeIntegerBounds(rest) as Record<string, unknown>;
}

function withoutSafeIntegerBounds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSafeIntegerBounds);
  if (typeof value !== "object" || value === null) return value;
  const result: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === "maximum" && inner === Number.MAX_SAFE_INTEGER) continue;
    if (key === "minimum" && inner === Number.MIN_SAFE_INTEGER) continue;
    result[key] = withoutSafeIntegerBounds(inner);
  }
  return result;
}
