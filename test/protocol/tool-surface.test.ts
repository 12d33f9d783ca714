import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { claudeCodeEnv } from "../helpers/claude-code-env.js";
import {
  type FakeMessagesApi,
  lastToolResults,
  type RecordedRequest,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { runProcess } from "../helpers/owned-process.js";
import { protocolHarness, STREAM_ARGS, writeSettings } from "./helpers.js";

/**
 * Claude Code's tool surface: in stream-json mode (and ACP) the model and the host see
 * `Bash`, `Read`, `Write`, `Edit`, `Glob` with Claude Code's input schemas, served by
 * rudder's own tools; `--tool-names` switches, and rules and hook matchers mean the same
 * under either name.
 */

const CLAUDE = resolve(".cache/claude-code/node_modules/.bin/claude");
const FIVE = ["Bash", "Read", "Write", "Edit", "Glob"];
const harness = protocolHarness();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await harness.cleanup();
});

interface ToolShape {
  name: string;
  required: string[];
  properties: string[];
}

function toolShapes(request: RecordedRequest | undefined): Map<string, ToolShape> {
  const tools = (request?.body.tools ?? []) as Array<{
    name: string;
    input_schema: { required?: string[]; properties?: Record<string, unknown> };
  }>;
  return new Map(
    tools.map((tool) => [
      tool.name,
      {
        name: tool.name,
        required: [...(tool.input_schema.required ?? [])].sort(),
        properties: Object.keys(tool.input_schema.properties ?? {}).sort(),
      },
    ]),
  );
}

async function fakeApi(): Promise<FakeMessagesApi> {
  const api = await startFakeMessagesApi({ fallback: () => ({ text: "ok" }) });
  cleanups.push(() => api.close());
  return api;
}

/** The first main request the real Claude Code sends, restricted to the five tools. */
async function claudeRequest(): Promise<RecordedRequest | undefined> {
  const api = await fakeApi();
  const home = mkdtempSync(join(tmpdir(), "rudder-claude-tools-"));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  await runProcess(CLAUDE, ["-p", "hello", "--tools", FIVE.join(",")], {
    cwd: home,
    env: claudeCodeEnv(home, api.url),
  });
  return api.requests.find((request) => request.main);
}

/** The first main request rudder sends with `args` (a one-shot prompt, or `message` on stdin). */
async function rudderRequest(
  args: string[],
  message?: string,
): Promise<RecordedRequest | undefined> {
  const api = await harness.api([{ text: "ok" }]);
  const sandbox = harness.sandbox(api);
  const child = harness.start(sandbox, args);
  if (message !== undefined) {
    child.sendUser(message);
    await child.waitForResult();
    child.end();
  }
  await child.exited;
  return api.requests.find((request) => request.main);
}

describe("Claude Code's tool surface", () => {
  it("stream-json shows the five tools with Claude Code 2.1.328's names and required fields", async () => {
    const [claude, rudder] = await Promise.all([
      claudeRequest(),
      rudderRequest(["-p", "--output-format", "stream-json", "--verbose", "hello"]),
    ]);
    const claudeTools = toolShapes(claude);
    const rudderTools = toolShapes(rudder);
    for (const name of FIVE) {
      const theirs = claudeTools.get(name);
      const ours = rudderTools.get(name);
      expect(theirs, `Claude Code offers ${name}`).toBeDefined();
      expect(ours?.required, name).toEqual(theirs?.required);
      // Every field rudder takes is one Claude Code has (rudder leaves out a few, e.g. `pages`).
      for (const property of ours?.properties ?? []) {
        expect(theirs?.properties, `${name}.${property}`).toContain(property);
      }
    }
    expect(rudderTools.get("Bash")?.properties).toEqual(
      ["command", "description", "run_in_background", "timeout"].sort(),
    );
    expect(rudderTools.get("Read")?.properties).toEqual(["file_path", "limit", "offset"]);
    expect(rudderTools.get("Edit")?.properties).toEqual(
      ["file_path", "new_string", "old_string", "replace_all"].sort(),
    );
    expect(rudderTools.get("Glob")?.properties).toEqual(["path", "pattern"]);
    expect([...rudderTools.keys()].some((name) => name === "bash" || name === "read_file")).toBe(
      false,
    );
  }, 180_000);

  it("rudder run keeps rudder's names; --tool-names switches either way; a bad value is one line", async () => {
    const text = toolShapes(await rudderRequest(["run", "hello"]));
    expect([...text.keys()]).toEqual(["bash", "read_file", "write_file", "edit_file", "glob"]);
    const claudeText = toolShapes(await rudderRequest(["run", "--tool-names", "claude", "hello"]));
    expect([...claudeText.keys()]).toEqual(FIVE);
    const rudderStream = toolShapes(
      await rudderRequest([...STREAM_ARGS, "--tool-names", "rudder"], "hello"),
    );
    expect([...rudderStream.keys()]).toEqual([
      "bash",
      "read_file",
      "write_file",
      "edit_file",
      "glob",
    ]);

    const api = await harness.api([]);
    const bad = harness.start(harness.sandbox(api), ["run", "--tool-names", "codex", "hello"]);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr.trim()).toBe(
      'rudder run: --tool-names must be claude or rudder (got "codex")',
    );
  }, 60_000);

  it("Claude Code's tools run on rudder's: Read, Write, Edit with replace_all, Glob in a path, Bash", async () => {
    const api = await harness.api([]);
    const sandbox = harness.sandbox(api);
    const file = join(sandbox.workspace, "notes.txt");
    writeFileSync(file, "one\ntwo\nthree\n");
    const script = [
      { name: "Read", input: { file_path: file, offset: 2, limit: 1 } },
      {
        name: "Write",
        input: { file_path: join(sandbox.workspace, "src", "a.ts"), content: "o o\n" },
      },
      {
        name: "Edit",
        input: { file_path: "src/a.ts", old_string: "o", new_string: "0", replace_all: true },
      },
      { name: "Glob", input: { pattern: "*.ts", path: "src" } },
      { name: "Bash", input: { command: "cat src/a.ts", description: "Show the file" } },
    ];
    for (const [index, step] of script.entries()) {
      api.push({ toolUse: { id: `call_${index}`, ...step } });
    }
    api.push({ text: "done" });
    const child = harness.start(sandbox, [
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "go",
    ]);
    expect(await child.exited).toBe(0);
    const results = api.requests
      .filter((request) => request.main)
      .slice(1)
      .map((request) => lastToolResults(request)[0]);
    expect(results.map((result) => result?.is_error ?? false)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(String(results[0]?.content)).toContain("two");
    expect(String(results[0]?.content)).not.toContain("three");
    expect(readFileSync(join(sandbox.workspace, "src", "a.ts"), "utf8")).toBe("0 0\n");
    expect(String(results[3]?.content)).toBe("src/a.ts");
    expect(String(results[4]?.content)).toBe("0 0\n");
    const uses = child.ofType("assistant").map((line) => line.message.content[0]);
    expect(uses.filter((block) => block.type === "tool_use").map((block) => block.name)).toEqual(
      script.map((step) => step.name),
    );
  }, 60_000);

  it("rules and hook matchers mean the same under Claude Code's names", async () => {
    const api = await harness.api([
      { toolUse: { id: "read", name: "Read", input: { file_path: "secret.txt" } } },
      { toolUse: { id: "git", name: "Bash", input: { command: "git --version" } } },
      { toolUse: { id: "rm", name: "Bash", input: { command: "rm -f gone.txt" } } },
      { toolUse: { id: "echo", name: "Bash", input: { command: "echo fine" } } },
      { toolUse: { id: "write", name: "Write", input: { file_path: "w.txt", content: "x" } } },
      { text: "done" },
    ]);
    const sandbox = harness.sandbox(api);
    writeFileSync(join(sandbox.workspace, "secret.txt"), "hidden");
    writeFileSync(join(sandbox.workspace, "gone.txt"), "still here");
    const log = join(sandbox.workspace, "..", "hooks.log");
    const hook = (tag: string) => ({
      type: "command",
      command: `jq -c '{tag: "${tag}", tool: .tool_name, input: .tool_input}' >> ${log}`,
    });
    writeSettings(sandbox.workspace, {
      permissions: { ask: ["Bash(git:*)"], deny: ["Bash(rm:*)", "Read(./secret.txt)"] },
      hooks: {
        PreToolUse: [
          { matcher: "Bash", hooks: [hook("Bash")] },
          { matcher: "write_file", hooks: [hook("write_file")] },
        ],
      },
    });
    const child = harness.start(sandbox, [
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--disallowedTools",
      "Glob",
      "go",
    ]);
    await child.exited;
    // A bare rule removes the tool, as in Claude Code; Read stays (a Read rule is no Glob rule).
    const offered = toolShapes(api.mainRequests()[0]);
    expect(offered.has("Glob")).toBe(false);
    expect(offered.has("Read")).toBe(true);
    const result = child.ofType("result")[0];
    expect(
      result?.permission_denials.map((denial: { tool_name: string; tool_use_id: string }) => [
        denial.tool_name,
        denial.tool_use_id,
      ]),
    ).toEqual([
      ["Read", "read"],
      ["Bash", "git"],
      ["Bash", "rm"],
    ]);
    expect(readFileSync(join(sandbox.workspace, "gone.txt"), "utf8")).toBe("still here");
    const results = new Map(
      api.requests
        .filter((request) => request.main)
        .flatMap((request) => lastToolResults(request))
        .map((block) => [block.tool_use_id, block]),
    );
    expect(results.get("echo")?.is_error ?? false).toBe(false);
    expect(String(results.get("echo")?.content)).toBe("fine\n");
    expect(String(results.get("read")?.content)).not.toContain("hidden");
    const hooks = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(hooks).toEqual([
      { tag: "Bash", tool: "Bash", input: { command: "git --version" } },
      { tag: "Bash", tool: "Bash", input: { command: "rm -f gone.txt" } },
      { tag: "Bash", tool: "Bash", input: { command: "echo fine" } },
      { tag: "write_file", tool: "Write", input: { file_path: "w.txt", content: "x" } },
    ]);
  }, 60_000);
});
