import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { lastToolResults, type RecordedRequest } from "../helpers/fake-messages-api.js";
import { protocolHarness } from "../protocol/helpers.js";
import { runPrint, SDK_ENGINES } from "../protocol/sdk-engines.js";

/**
 * The MCP reference server `@modelcontextprotocol/server-everything` (installed into .cache/ by
 * scripts/install-mcp-everything.sh) behind rudder and behind the real Claude Code, with the
 * same scripted calls: text, an image, an error and the roots the client declares.
 */
const harness = protocolHarness();
afterEach(() => harness.cleanup());

let serverEntry: string;

beforeAll(() => {
  const installer = join(import.meta.dirname, "..", "..", "scripts", "install-mcp-everything.sh");
  serverEntry = execFileSync("bash", [installer, "--print-path"], { encoding: "utf8" }).trim();
}, 300_000);

// biome-ignore lint/suspicious/noExplicitAny: tool results are whatever JSON the engine sent.
type Block = Record<string, any>;

function resultFor(request: RecordedRequest | undefined, toolUseId: string): Block {
  const results = request === undefined ? [] : (lastToolResults(request) as Block[]);
  const found = results.find((block) => block.tool_use_id === toolUseId);
  if (found === undefined) throw new Error(`no tool_result for ${toolUseId}`);
  return found;
}

function textOf(result: Block): string {
  return typeof result.content === "string"
    ? result.content
    : (result.content as Block[])
        .filter((block) => block.type === "text")
        .map((block) => block.text)
        .join("\n");
}

describe.each(SDK_ENGINES)("server-everything behind $name", (engine) => {
  it("passes text, an image block, an error and the workspace root", async () => {
    const api = await harness.api([
      {
        toolUse: [
          { id: "toolu_echo", name: "mcp__everything__echo", input: { message: "hello there" } },
          { id: "toolu_image", name: "mcp__everything__get-tiny-image", input: {} },
          { id: "toolu_sum", name: "mcp__everything__get-sum", input: { a: "one", b: 2 } },
          { id: "toolu_roots", name: "mcp__everything__get-roots-list", input: {} },
        ],
      },
      { text: "done" },
    ]);
    const sandbox = harness.sandbox(api);
    const config = {
      mcpServers: { everything: { command: process.execPath, args: [serverEntry, "stdio"] } },
    };
    const run = await runPrint(engine, sandbox, [
      "-p",
      "use the everything server",
      "--output-format",
      "json",
      "--mcp-config",
      JSON.stringify(config),
      "--allowedTools",
      "mcp__everything",
    ]);
    expect(JSON.parse(run.stdout)).toMatchObject({ result: "done", is_error: false });
    const after = api.mainRequests()[1];

    expect(textOf(resultFor(after, "toolu_echo"))).toContain("Echo: hello there");

    const image = resultFor(after, "toolu_image");
    expect(image.is_error ?? false).toBe(false);
    expect(image.content).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "text", text: "Here's the image you requested:" }),
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: expect.any(String) },
        },
      ]),
    );

    const sum = resultFor(after, "toolu_sum");
    expect(sum.is_error).toBe(true);
    expect(textOf(sum)).toMatch(/invalid|expected number/i);

    const roots = textOf(resultFor(after, "toolu_roots"));
    expect(roots).toContain(pathToFileURL(sandbox.workspace).href);
  }, 120_000);

  it("prints an image result as image blocks in stream-json's user line", async () => {
    const api = await harness.api([
      { toolUse: { id: "toolu_image", name: "mcp__everything__get-tiny-image", input: {} } },
      { text: "done" },
    ]);
    const sandbox = harness.sandbox(api);
    const config = {
      mcpServers: { everything: { command: process.execPath, args: [serverEntry, "stdio"] } },
    };
    const run = await runPrint(engine, sandbox, [
      "-p",
      "show the image",
      "--output-format",
      "stream-json",
      "--verbose",
      "--mcp-config",
      JSON.stringify(config),
      "--allowedTools",
      "mcp__everything",
    ]);
    const line = run.stdout
      .split("\n")
      .filter((text) => text.trim() !== "")
      .map((text) => JSON.parse(text))
      .find(
        (parsed) => parsed.type === "user" && parsed.message.content[0]?.type === "tool_result",
      );
    expect(line?.message.content[0].content).toEqual(
      expect.arrayContaining([
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: expect.any(String) },
        },
      ]),
    );
  }, 120_000);
});
