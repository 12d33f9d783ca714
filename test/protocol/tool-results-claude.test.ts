import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { ScriptStep } from "../helpers/fake-messages-api.js";
import { type Line, protocolHarness, type Sandbox } from "./helpers.js";
import { runPrint, SDK_ENGINES, type SdkEngine } from "./sdk-engines.js";

/**
 * What a tool did, as hosts see it: the `tool_use_result` of stream-json's `user` lines and
 * a PostToolUse hook's `tool_response`, for the same calls of Bash, Read, Write (create and
 * update), Edit and Glob through the real Claude Code 2.1.328 and through rudder. Each must
 * have Claude Code's per-tool shape: the same keys, with values of the same JSON types.
 */

const harness = protocolHarness();
afterEach(() => harness.cleanup());

function script(workspace: string): ScriptStep[] {
  const file = (name: string) => join(workspace, name);
  const calls = [
    { id: "bash", name: "Bash", input: { command: "echo out", description: "Print out" } },
    { id: "read", name: "Read", input: { file_path: file("a.txt"), offset: 2, limit: 1 } },
    { id: "create", name: "Write", input: { file_path: file("b.txt"), content: "new\n" } },
    { id: "update", name: "Write", input: { file_path: file("b.txt"), content: "newer\n" } },
    {
      id: "edit",
      name: "Edit",
      input: { file_path: file("b.txt"), old_string: "newer", new_string: "newest" },
    },
    { id: "glob", name: "Glob", input: { pattern: "*.txt" } },
  ];
  return [...calls.map((call) => ({ toolUse: call })), { text: "done" }];
}

/** A value's shape: its JSON type, and for objects the shapes of their keys, sorted. */
function shape(value: unknown): unknown {
  if (value === null) return "null";
  if (Array.isArray(value)) return value.length === 0 ? "array" : ["array of", shape(value[0])];
  if (typeof value !== "object") return typeof value;
  return Object.fromEntries(
    Object.keys(value as object)
      .sort()
      .map((key) => [key, shape((value as Record<string, unknown>)[key])]),
  );
}

interface Reports {
  results: Map<string, unknown>;
  responses: Map<string, unknown>;
  lines: Line[];
}

async function reports(engine: SdkEngine): Promise<Reports> {
  const api = await harness.api([]);
  const sandbox: Sandbox = harness.sandbox(api);
  api.push(...script(sandbox.workspace));
  writeFileSync(join(sandbox.workspace, "a.txt"), "one\ntwo\nthree\n");
  const log = join(sandbox.home, "post-tool-use.jsonl");
  const settings = {
    hooks: {
      PostToolUse: [
        { matcher: "*", hooks: [{ type: "command", command: `cat >> ${log}; echo >> ${log}` }] },
      ],
    },
  };
  const run = await runPrint(engine, sandbox, [
    "-p",
    "go",
    "--output-format",
    "stream-json",
    "--verbose",
    "--settings",
    JSON.stringify(settings),
    ...(engine.name === "claude"
      ? ["--tools", "Bash,Read,Write,Edit,Glob", "--permission-mode", "bypassPermissions"]
      : []),
  ]);
  const lines = run.stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Line);
  expect(lines.at(-1), run.stderr).toMatchObject({ type: "result", result: "done" });
  const results = new Map<string, unknown>();
  for (const line of lines) {
    if (line.type !== "user") continue;
    const block = line.message.content[0];
    if (block?.type === "tool_result") results.set(block.tool_use_id, line.tool_use_result);
  }
  const responses = new Map<string, unknown>();
  for (const text of readFileSync(log, "utf8").split("\n")) {
    if (text.trim() === "") continue;
    const input = JSON.parse(text) as { tool_use_id: string; tool_response: unknown };
    responses.set(input.tool_use_id, input.tool_response);
  }
  return { results, responses, lines };
}

it("tool_use_result and PostToolUse's tool_response have Claude Code's per-tool shapes", async () => {
  const [rudder, claude] = await Promise.all(SDK_ENGINES.map((engine) => reports(engine)));
  const ids = ["bash", "read", "create", "update", "edit", "glob"];
  for (const id of ids) {
    expect(claude?.results.get(id), `Claude Code's ${id}`).toBeTypeOf("object");
    expect(shape(rudder?.results.get(id)), `tool_use_result of ${id}`).toEqual(
      shape(claude?.results.get(id)),
    );
    expect(shape(rudder?.responses.get(id)), `tool_response of ${id}`).toEqual(
      shape(claude?.responses.get(id)),
    );
  }
  // Counted alike: "one\ntwo\nthree\n" is 4 lines to Claude Code (the empty one after the last newline).
  const totalLines = (report: typeof rudder) =>
    (report?.results.get("read") as { file?: { totalLines?: number } } | undefined)?.file
      ?.totalLines;
  expect(totalLines(rudder)).toBe(totalLines(claude));
  // And the values say what happened.
  expect(rudder?.results.get("bash")).toMatchObject({ stdout: "out", interrupted: false });
  expect(rudder?.results.get("read")).toMatchObject({
    type: "text",
    file: { content: "two", startLine: 2, numLines: 1 },
  });
  expect(rudder?.results.get("create")).toMatchObject({ type: "create", originalFile: null });
  expect(rudder?.results.get("update")).toMatchObject({
    type: "update",
    originalFile: "new\n",
    structuredPatch: [
      { oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: ["-new", "+newer"] },
    ],
  });
  expect(rudder?.results.get("edit")).toMatchObject({
    oldString: "newer",
    newString: "newest",
    originalFile: "newer\n",
    replaceAll: false,
    structuredPatch:
      claude?.results.get("edit") &&
      (claude.results.get("edit") as { structuredPatch: unknown }).structuredPatch,
  });
  expect(rudder?.results.get("glob")).toMatchObject({
    filenames: ["a.txt", "b.txt"],
    numFiles: 2,
    truncated: false,
  });
}, 180_000);
