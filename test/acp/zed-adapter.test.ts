import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { lastToolResults } from "../helpers/fake-messages-api.js";
import { protocolHarness, type Sandbox } from "../protocol/helpers.js";
import { SDK_ENGINES } from "../protocol/sdk-engines.js";
import { AcpClient } from "./acp-client.js";

/**
 * Zed's ACP adapter for Claude Code (@zed-industries/claude-code-acp 0.16.2, what Zed,
 * JetBrains and Neovim plugins run), driven through the ACP SDK's client side with
 * CLAUDE_CODE_EXECUTABLE pointing at rudder, and as the pair at the real Claude Code: a new
 * session, and a prompt whose model reads a file through the adapter's in-process Read tool
 * (`mcp__acp__Read`, which reads through the client's fs) and runs a Bash command the
 * client is asked about.
 */

const harness = protocolHarness();
const clients: AcpClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.kill();
  await harness.cleanup();
});

let adapter = "";
beforeAll(() => {
  adapter = execFileSync(
    "bash",
    [join(import.meta.dirname, "..", "..", "scripts", "install-zed-adapter.sh"), "--print-path"],
    { encoding: "utf8" },
  ).trim();
}, 300_000);

/** An ask rule for `touch`, in both engines' project settings. */
function askForTouch(sandbox: Sandbox): void {
  for (const folder of [".rudder", ".claude"]) {
    mkdirSync(join(sandbox.workspace, folder), { recursive: true });
    writeFileSync(
      join(sandbox.workspace, folder, "settings.json"),
      JSON.stringify({ permissions: { ask: ["Bash(touch:*)"] } }),
    );
  }
}

describe.each(SDK_ENGINES)("Zed's adapter with CLAUDE_CODE_EXECUTABLE=$name", (engine) => {
  it("reads a file through mcp__acp__Read and runs Bash after the client allows it", async () => {
    const api = await harness.api([]);
    const sandbox = harness.sandbox(api);
    const notes = join(sandbox.workspace, "notes.txt");
    writeFileSync(notes, "the heron flies at dawn\n");
    api.push(
      { toolUse: { id: "read", name: "mcp__acp__Read", input: { file_path: notes } } },
      {
        toolUse: {
          id: "touch",
          name: "Bash",
          input: { command: "touch made.txt", description: "Create a file" },
        },
      },
      { text: "all done" },
    );
    askForTouch(sandbox);
    const client = new AcpClient(sandbox, {
      argv: [adapter],
      env: { ...engine.env(sandbox), CLAUDE_CODE_EXECUTABLE: engine.executable() },
      fs: true,
    });
    clients.push(client);
    client.answer = (request) =>
      request.options.find((option) => option.kind === "allow_once")?.optionId ?? "reject";
    await client.initialize();
    const { sessionId } = await client.connection.newSession({
      cwd: sandbox.workspace,
      mcpServers: [],
    });
    const answer = await client.connection.prompt({
      sessionId,
      prompt: [{ type: "text", text: "read the notes, then make a file" }],
    });
    expect(answer.stopReason, client.stderr).toBe("end_turn");

    // The model was offered the adapter's Read, not the built-in one it disallows.
    const first = api.mainRequests()[0];
    const names = ((first?.body.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
    expect(names).toContain("mcp__acp__Read");
    expect(names).toContain("Bash");
    expect(names).not.toContain("Read");

    expect(client.fileReads).toEqual([notes]);
    const results = api
      .mainRequests()
      .flatMap((request) => lastToolResults(request))
      .map((block) => [block.tool_use_id, JSON.stringify(block.content), block.is_error ?? false]);
    expect(results.find(([id]) => id === "read")?.[1]).toContain("the heron flies at dawn");
    expect(results.find(([id]) => id === "touch")?.[2]).toBe(false);

    // The client was asked about the command, and the editor shows it as one.
    const asked = client.permissions.map((request) => request.toolCall.toolCallId);
    expect(asked).toContain("touch");
    expect(existsSync(join(sandbox.workspace, "made.txt"))).toBe(true);
    const calls = client.ofKind("tool_call");
    expect(calls.find((call) => call.toolCallId === "touch")).toMatchObject({ kind: "execute" });
    expect(calls.find((call) => call.toolCallId === "read")).toMatchObject({ kind: "read" });
    const text = client
      .ofKind("agent_message_chunk")
      .map((chunk) => (chunk.content.type === "text" ? chunk.content.text : ""))
      .join("");
    expect(text).toContain("all done");
  }, 180_000);
});
