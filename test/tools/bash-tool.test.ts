import * as v from "valibot";
import { afterAll, describe, expect, it } from "vitest";
import { createBashTool } from "../../src/tools/bash-tool.js";
import { contextFor, makeWorkspace } from "./temp-workspace.js";

const { workspace, remove } = makeWorkspace("bash-tool");
afterAll(remove);
const bash = createBashTool();
const run = (input: Record<string, unknown>) =>
  bash.execute(v.parse(bash.inputSchema, input), contextFor(workspace));

describe("bash tool", () => {
  it("shows run_in_background and timeout in its schema and ignores unknown fields", () => {
    const properties = bash.jsonSchema.properties as Record<string, unknown>;
    expect(Object.keys(properties)).toEqual(["command", "run_in_background", "timeout"]);
    expect(bash.jsonSchema.required).toEqual(["command"]);
    expect(bash.description).toContain("run_in_background");
    expect(v.parse(bash.inputSchema, { command: "ls", description: "list files" })).toEqual({
      command: "ls",
    });
    expect(v.safeParse(bash.inputSchema, { command: "ls", timeout: 600_001 }).success).toBe(false);
  });

  it("returns the output of a successful command", async () => {
    expect(await run({ command: "echo hello" })).toMatchObject({
      content: "hello\n",
      isError: false,
    });
  });

  it("says (no output) when there is none", async () => {
    expect(await run({ command: "true" })).toMatchObject({
      content: "(no output)",
      isError: false,
    });
  });

  it("prefixes a non-zero exit status", async () => {
    const result = await run({ command: "echo oops; exit 7" });
    expect(result.isError).toBe(true);
    expect(result.content).toBe("Error: command exited with status 7\noops\n");
  });

  it("keeps head and tail of output over 30,000 characters", async () => {
    const result = await run({
      command: "printf 'START'; head -c 100000 /dev/zero | tr '\\0' 'x'; printf 'END'",
    });
    expect(result.isError).toBe(false);
    expect(result.content.startsWith("START")).toBe(true);
    expect(result.content.endsWith("END")).toBe(true);
    expect(result.content.includes(`... [${100_008 - 30_000} characters cut] ...`)).toBe(true);
  });

  it("reports a timeout", async () => {
    const result = await run({ command: "sleep 30", timeout: 300 });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Error: command timed out after 0\.3 s/);
  });

  it("runs in the workspace", async () => {
    const result = await run({ command: "pwd -P" });
    expect(result.content.trim()).toBe(workspace);
  });
});
