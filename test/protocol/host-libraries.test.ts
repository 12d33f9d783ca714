import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, expect, it } from "vitest";
import { lastToolResults } from "../helpers/fake-messages-api.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import { restoreEnvironmentAfterAll } from "../helpers/restore-environment.js";
import { runRudder } from "../helpers/rudder-cli.js";
import { protocolHarness, writeSettings } from "./helpers.js";

restoreEnvironmentAfterAll();

/**
 * Libraries built for Claude Code, on rudder: ai-sdk-provider-claude-code (generateText and
 * streamText with tool parts, which carry Claude Code's tool names), and a hook written with
 * @goodfoot/claude-code-hooks (compiled by its CLI) under either tool surface.
 */

const harness = protocolHarness();
afterEach(() => harness.cleanup());

let libraries = "";
beforeAll(() => {
  libraries = execFileSync(
    "bash",
    [join(import.meta.dirname, "..", "..", "scripts", "install-host-libraries.sh"), "--print-path"],
    { encoding: "utf8" },
  ).trim();
}, 300_000);

function load(folder: string, name: string, entry: string) {
  return import(pathToFileURL(join(libraries, folder, "node_modules", name, entry)).href);
}

it("ai-sdk-provider-claude-code: generateText and streamText with Read and Bash tool parts", async () => {
  const api = await harness.api([]);
  const sandbox = harness.sandbox(api);
  writeFileSync(join(sandbox.workspace, "a.txt"), "alpha\n");
  api.push(
    { toolUse: { name: "Read", input: { file_path: join(sandbox.workspace, "a.txt") } } },
    { text: "it says alpha" },
    { toolUse: { name: "Bash", input: { command: "echo streamed" } } },
    { text: "streamed done" },
  );
  const { generateText, streamText } = await load("ai-sdk", "ai", "dist/index.mjs");
  const { createClaudeCode } = await load("ai-sdk", "ai-sdk-provider-claude-code", "dist/index.js");
  const provider = createClaudeCode({
    defaultSettings: {
      pathToClaudeCodeExecutable: RUDDER_CLI,
      cwd: sandbox.workspace,
      env: sandbox.env,
      permissionMode: "bypassPermissions",
    },
  });
  const generated = await generateText({ model: provider("sonnet"), prompt: "read a.txt" });
  expect(generated.text).toBe("it says alpha");
  const kinds = generated.steps.flatMap(
    (step: { content: { type: string; toolName?: string }[] }) =>
      step.content.map((part) => `${part.type}${part.toolName ? `:${part.toolName}` : ""}`),
  );
  expect(kinds).toEqual(expect.arrayContaining(["tool-call:Read", "tool-result:Read", "text"]));

  const streamed = streamText({ model: provider("sonnet"), prompt: "run echo" });
  const parts: string[] = [];
  for await (const part of streamed.fullStream) {
    parts.push(`${part.type}${part.toolName ? `:${part.toolName}` : ""}`);
  }
  expect(await streamed.text).toBe("streamed done");
  expect(parts).toEqual(expect.arrayContaining(["tool-call:Bash", "tool-result:Bash"]));
}, 120_000);

it("a @goodfoot/claude-code-hooks hook (matcher Bash) denies under both tool surfaces", async () => {
  const source = join(libraries, "hooks", "deny-rm");
  mkdirSync(source, { recursive: true });
  writeFileSync(
    join(source, "deny-rm.ts"),
    `import { preToolUseHook, preToolUseOutput } from "@goodfoot/claude-code-hooks";
export default preToolUseHook({ matcher: "Bash" }, async (input) => {
  const { command } = input.tool_input as { command: string };
  return command.startsWith("rm ")
    ? preToolUseOutput({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "no rm via goodfoot" } })
    : preToolUseOutput({});
});
`,
  );
  const cli = join(
    libraries,
    "hooks",
    "node_modules",
    "@goodfoot",
    "claude-code-hooks",
    "dist",
    "cli.js",
  );
  execFileSync(process.execPath, [cli, "-i", "deny-rm/*.ts", "-o", "deny-rm/dist/hooks.json"], {
    cwd: join(libraries, "hooks"),
    stdio: "ignore",
  });
  const hook = join(source, "dist", "bin", "deny-rm.mjs");
  expect(existsSync(hook)).toBe(true);
  // The two surfaces in two sandboxes at once.
  const surfaces = [
    ["claude", "Bash"],
    ["rudder", "bash"],
  ] as const;
  await Promise.all(
    surfaces.map(async ([surface, name]) => {
      const api = await harness.api([
        { toolUse: { id: "rm", name, input: { command: "rm keep.txt" } } },
        { toolUse: { id: "echo", name, input: { command: "echo ok" } } },
        { text: "done" },
      ]);
      const sandbox = harness.sandbox(api);
      writeFileSync(join(sandbox.workspace, "keep.txt"), "x");
      writeSettings(sandbox.workspace, {
        hooks: {
          PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `node ${hook}` }] }],
        },
      });
      const run = await runRudder(["run", "--tool-names", surface, "go"], {
        cwd: sandbox.workspace,
        env: sandbox.env,
      });
      expect(run.code, run.stderr).toBe(0);
      const results = new Map(
        api
          .mainRequests()
          .flatMap((request) => lastToolResults(request))
          .map((block) => [block.tool_use_id, String(block.content)]),
      );
      expect(results.get("rm"), surface).toContain("no rm via goodfoot");
      expect(results.get("echo"), surface).toBe("ok\n");
      expect(existsSync(join(sandbox.workspace, "keep.txt"))).toBe(true);
    }),
  );
}, 120_000);
