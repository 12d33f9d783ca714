import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lastToolResults } from "../helpers/fake-messages-api.js";
import { FAKE_MCP_SERVER } from "../helpers/fixtures.js";
import { waitFor } from "../helpers/wait-for.js";
import { protocolHarness, writeSettings } from "../protocol/helpers.js";
import { AcpClient } from "./acp-client.js";

/** `rudder acp` driven by the ACP SDK's client side against the fake Messages API. */
const harness = protocolHarness();
const clients: AcpClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.kill();
  await harness.cleanup();
});

/** Live (not zombie) processes running the test's unmistakable `sleep 301.777`. */
function sleepers(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const command = readFileSync(`/proc/${pid}/cmdline`, "utf8");
        const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
        return command.includes("301.777") && state !== "Z";
      } catch {
        return false;
      }
    })
    .map(Number);
}

function start(sandbox: Parameters<typeof harness.start>[0]): AcpClient {
  const client = new AcpClient(sandbox);
  clients.push(client);
  return client;
}

describe("rudder acp", () => {
  it("streams a prompt's text and tool calls by kind, asks permission, and replays on load", async () => {
    const api = await harness.api([
      { toolUse: { id: "t1", name: "Bash", input: { command: "touch a.txt" } } },
      { toolUse: { id: "t2", name: "Bash", input: { command: "touch a.txt" } } },
      { toolUse: { id: "t3", name: "Bash", input: { command: "touch b.txt" } } },
      {
        toolUse: [
          { id: "t4", name: "Read", input: { file_path: "a.txt" } },
          { id: "t5", name: "Glob", input: { pattern: "*.txt" } },
          { id: "t6", name: "Write", input: { file_path: "c.txt", content: "new\n" } },
        ],
      },
      {
        toolUse: {
          id: "t7",
          name: "Edit",
          input: { file_path: "c.txt", old_string: "new", new_string: "newer" },
        },
      },
      { text: "all done" },
    ]);
    const sandbox = harness.sandbox(api);
    writeSettings(sandbox.workspace, {
      permissions: { allow: ["Read", "Edit"], ask: ["Bash(touch:*)"] },
    });
    const client = start(sandbox);
    client.answer = (request) =>
      request.toolCall.title === "touch a.txt" ? "allow_always" : "reject_once";
    const init = await client.initialize();
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      promptCapabilities: { image: true },
    });
    const { sessionId } = await client.connection.newSession({
      cwd: sandbox.workspace,
      mcpServers: [],
    });
    const answer = await client.connection.prompt({
      sessionId,
      prompt: [{ type: "text", text: "make some files" }],
    });
    expect(answer.stopReason).toBe("end_turn");

    // "Always" for touch a.txt added a session rule: the second one was not asked.
    expect(
      client.permissions.map((request) => [request.toolCall.kind, request.toolCall.title]),
    ).toEqual([
      ["execute", "touch a.txt"],
      ["execute", "touch b.txt"],
    ]);
    expect(client.permissions[0]?.options.map((option) => option.kind)).toEqual([
      "allow_once",
      "allow_always",
      "reject_once",
    ]);
    expect(existsSync(join(sandbox.workspace, "a.txt"))).toBe(true);
    expect(existsSync(join(sandbox.workspace, "b.txt"))).toBe(false);
    expect(readFileSync(join(sandbox.workspace, "c.txt"), "utf8")).toBe("newer\n");

    const calls = new Map(client.ofKind("tool_call").map((call) => [call.toolCallId, call]));
    expect(calls.get("t1")).toMatchObject({ kind: "execute", title: "touch a.txt" });
    expect(calls.get("t4")).toMatchObject({
      kind: "read",
      locations: [{ path: join(sandbox.workspace, "a.txt") }],
    });
    expect(calls.get("t5")).toMatchObject({ kind: "search" });
    expect(calls.get("t6")).toMatchObject({
      kind: "edit",
      content: [{ type: "diff", path: join(sandbox.workspace, "c.txt"), newText: "new\n" }],
    });
    expect(calls.get("t7")).toMatchObject({
      kind: "edit",
      content: [{ type: "diff", oldText: "new", newText: "newer" }],
    });
    const ends = new Map(
      client.ofKind("tool_call_update").map((update) => [update.toolCallId, update]),
    );
    expect(ends.get("t1")?.status).toBe("completed");
    expect(ends.get("t3")?.status).toBe("failed");
    const text = client
      .ofKind("agent_message_chunk")
      .map((chunk) => (chunk.content.type === "text" ? chunk.content.text : ""))
      .join("");
    expect(text).toBe("all done");
    expect(await client.close()).toBe(0);

    const again = start(sandbox);
    await again.initialize();
    await again.connection.loadSession({ sessionId, cwd: sandbox.workspace, mcpServers: [] });
    const replayed = again.updates.map((notification) => notification.update);
    expect(replayed[0]).toEqual({
      sessionUpdate: "user_message_chunk",
      content: { type: "text", text: "make some files" },
    });
    expect(again.ofKind("tool_call").map((call) => call.toolCallId)).toEqual([
      "t1",
      "t2",
      "t3",
      "t4",
      "t5",
      "t6",
      "t7",
    ]);
    expect(replayed.at(-1)).toEqual({
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: "all done" },
    });
    expect(await again.close()).toBe(0);
  }, 60_000);

  it("reads and writes files through the client when it offers fs", async () => {
    const api = await harness.api([
      {
        toolUse: { id: "r1", name: "Read", input: { file_path: "notes.txt", offset: 2, limit: 1 } },
      },
      { toolUse: { id: "w1", name: "Write", input: { file_path: "out.txt", content: "hi\n" } } },
      { toolUse: { id: "r2", name: "Read", input: { file_path: "../outside.txt" } } },
      { text: "done" },
    ]);
    const sandbox = harness.sandbox(api);
    writeFileSync(join(sandbox.workspace, "notes.txt"), "one\ntwo\nthree\n");
    const client = new AcpClient(sandbox, { fs: true });
    clients.push(client);
    await client.initialize();
    const { sessionId } = await client.connection.newSession({
      cwd: sandbox.workspace,
      mcpServers: [],
    });
    await client.connection.prompt({ sessionId, prompt: [{ type: "text", text: "go" }] });
    expect(client.fileReads).toEqual([join(sandbox.workspace, "notes.txt")]);
    expect(client.fileWrites).toEqual([join(sandbox.workspace, "out.txt")]);
    expect(readFileSync(join(sandbox.workspace, "out.txt"), "utf8")).toBe("hi\n");
    const results = new Map(
      api
        .mainRequests()
        .flatMap((request) => lastToolResults(request))
        .map((block) => [block.tool_use_id, block]),
    );
    expect(results.get("r1")?.content).toBe("two\n");
    expect(results.get("r2")?.is_error).toBe(true);
    expect(await client.close()).toBe(0);
  }, 60_000);

  it("session/cancel ends the turn and the processes it runs", async () => {
    const api = await harness.api([
      {
        toolUse: {
          id: "slow",
          name: "Bash",
          input: { command: "exec sleep 301.777" },
        },
      },
      { text: "never" },
    ]);
    const sandbox = harness.sandbox(api);
    writeSettings(sandbox.workspace, { permissions: { allow: ["Bash"] } });
    const client = start(sandbox);
    await client.initialize();
    const { sessionId } = await client.connection.newSession({
      cwd: sandbox.workspace,
      mcpServers: [],
    });
    const answer = client.connection.prompt({
      sessionId,
      prompt: [{ type: "text", text: "wait a long time" }],
    });
    await client.waitForUpdate(
      (update) => update.sessionUpdate === "tool_call" && update.toolCallId === "slow",
    );
    await waitFor(() => sleepers().length > 0, "the slow tool's sleep");
    await client.connection.cancel({ sessionId });
    expect((await answer).stopReason).toBe("cancelled");
    expect(sleepers()).toEqual([]);
    expect(await client.close()).toBe(0);
  }, 60_000);

  it("takes the client's stdio MCP servers", async () => {
    const api = await harness.api([
      { toolUse: { id: "m1", name: "mcp__fake__echo", input: { text: "from the editor" } } },
      { text: "echoed" },
    ]);
    const sandbox = harness.sandbox(api);
    writeSettings(sandbox.workspace, { permissions: { allow: ["mcp__fake"] } });
    const client = start(sandbox);
    await client.initialize();
    const server = FAKE_MCP_SERVER;
    const { sessionId } = await client.connection.newSession({
      cwd: sandbox.workspace,
      mcpServers: [{ name: "fake", command: process.execPath, args: [server], env: [] }],
    });
    await client.connection.prompt({ sessionId, prompt: [{ type: "text", text: "echo" }] });
    const end = client.ofKind("tool_call_update").find((update) => update.toolCallId === "m1");
    expect(end?.status).toBe("completed");
    expect(JSON.stringify(end?.content)).toContain("from the editor");
    expect(await client.close()).toBe(0);
  }, 60_000);

  it("gives the model a prompt's image and embedded file", async () => {
    const api = await harness.api([{ text: "a tiny picture" }]);
    const sandbox = harness.sandbox(api);
    const client = start(sandbox);
    await client.initialize();
    const { sessionId } = await client.connection.newSession({
      cwd: sandbox.workspace,
      mcpServers: [],
    });
    await client.connection.prompt({
      sessionId,
      prompt: [
        { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
        { type: "text", text: "what is this?" },
        {
          type: "resource",
          resource: { uri: "file:///notes.md", text: "some notes", mimeType: "text/markdown" },
        },
      ],
    });
    const last = api.mainRequests()[0]?.body.messages.at(-1);
    expect(last.role).toBe("user");
    expect(last.content[0]).toEqual({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
    });
    expect(JSON.stringify(last.content)).toContain("what is this?");
    expect(JSON.stringify(last.content)).toContain("some notes");
    expect(await client.close()).toBe(0);
  }, 60_000);
});
