import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { protocolHarness, type Sandbox } from "../protocol/helpers.js";
import { runPrint, SDK_ENGINES, type SdkEngine } from "../protocol/sdk-engines.js";

/**
 * `permission_denials` of the result, in `--output-format json` and `stream-json`, on rudder
 * and on the real Claude Code with the same deny rule and the same scripted tool call.
 */
const harness = protocolHarness();
afterEach(() => harness.cleanup());

/** rudder shows Claude Code's tool names in stream-json and its own in json output. */
function shellTool(engine: SdkEngine, format: string): string {
  return engine.name === "claude" || format === "stream-json" ? "Bash" : "bash";
}

function denyRemovals(engine: SdkEngine, sandbox: Sandbox): void {
  const folder = join(sandbox.workspace, engine.name === "rudder" ? ".rudder" : ".claude");
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, "settings.json"),
    JSON.stringify({ permissions: { deny: ["Bash(rm:*)"] } }),
  );
}

const FORMATS = [
  { format: "json", extra: [] as string[] },
  { format: "stream-json", extra: ["--verbose"] },
];

describe.each(SDK_ENGINES)("permission_denials on $name", (engine) => {
  it.each(FORMATS)(
    "lists the denied call in --output-format $format",
    async ({ format, extra }) => {
      const api = await harness.api([
        {
          toolUse: {
            name: shellTool(engine, format),
            id: "toolu_denied_1",
            input: { command: "rm -rf victim" },
          },
        },
        { text: "it was refused" },
      ]);
      const sandbox = harness.sandbox(api);
      mkdirSync(join(sandbox.workspace, "victim"));
      denyRemovals(engine, sandbox);
      const run = await runPrint(engine, sandbox, [
        "-p",
        "remove the victim folder",
        "--output-format",
        format,
        ...extra,
      ]);
      expect(run.stderr).not.toMatch(/error/i);
      const lines = run.stdout
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const result = lines.find((line) => line.type === "result");
      expect(result).toMatchObject({ result: "it was refused" });
      expect(result?.permission_denials).toEqual([
        {
          tool_name: shellTool(engine, format),
          tool_use_id: "toolu_denied_1",
          tool_input: expect.objectContaining({ command: "rm -rf victim" }),
        },
      ]);
      expect(existsSync(join(sandbox.workspace, "victim"))).toBe(true);
    },
    60_000,
  );
});
