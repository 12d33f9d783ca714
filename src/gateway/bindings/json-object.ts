/**
 * `schema` (an object or record schema) behind a check that the value is a JSON object:
 * valibot's `object` and `record` take arrays too, and an array where the configuration wants
 * an object is a mistake to name, not an empty object.
 */
import * as v from "valibot";

export function jsonObject<const Schema extends v.GenericSchema<Record<string, unknown>, unknown>>(
  schema: Schema,
  message = "must be an object",
) {
  return v.pipe(
    v.custom<Record<string, unknown>>(
      (value) => typeof value === "object" && value !== null && !Array.isArray(value),
      message,
    ),
    schema,
  );
}
