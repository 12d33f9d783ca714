import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { createDefaultTools, TOOL_NAMES } from "../../src/tools/default-tools.js";

describe("createDefaultTools", () => {
  it("returns the five tools in order with the seed's names and inputs", () => {
    const tools = createDefaultTools();
    expect(tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES]);
    expect(TOOL_NAMES).toEqual(["bash", "read_file", "write_file", "edit_file", "glob"]);
    const properties = Object.fromEntries(
      tools.map((tool) => [tool.name, Object.keys(tool.jsonSchema.properties as object)]),
    );
    expect(properties).toEqual({
      bash: ["command", "run_in_background", "timeout"],
      read_file: ["path", "offset", "limit"],
      write_file: ["path", "content"],
      edit_file: ["path", "old_text", "new_text", "replace_all"],
      glob: ["pattern"],
    });
  });

  it("shows clean JSON schemas and strips unknown input fields", () => {
    for (const tool of createDefaultTools()) {
      expect(tool.jsonSchema.type).toBe("object");
      expect(tool.jsonSchema).not.toHaveProperty("$schema");
      expect(JSON.stringify(tool.jsonSchema)).not.toContain(String(Number.MAX_SAFE_INTEGER));
      expect(tool.description.length).toBeGreaterThan(80);
    }
    const [, read] = createDefaultTools();
    expect(v.parse(read!.inputSchema, { path: "a", description: "x", extra: 1 })).toEqual({
      path: "a",
    });
  });
});
