/**
 * Hangs are bounded and told, through the gateway with rudder agents on the fake Messages API
 * (bounds configured small): a model stream that stalls after its first delta, or never
 * answers, is tried once more and then fails the turn in plain words naming rudder; a hung MCP
 * tool is a tool error and the turn goes on; a hook past its timeout is an event on the
 * channel and a log line; an MCP server that died is started again on its next use, the model
 * told. One gateway and one fake API serve every case; each case is its own channel, and the
 * fake answers each by the case named in its message, so the cases run at once.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeMessagesApi,
  lastToolResults,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { FAKE_MCP_SERVER } from "../helpers/fixtures.js";
import { waitFor } from "../helpers/wait-for.js";
import { type ApiMessage, openEvents, startRudderGateway, type TestGateway } from "./helpers.js";

let api: FakeMessagesApi;
let gateway: TestGateway;
let workspace: string;
const logLines: string[] = [];

/** A tool result's content (a string or text blocks) as plain text. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block: { text?: unknown }) => String(block?.text ?? "")).join("");
}

/** How many tool results the conversation holds so far. */
function toolResultCount(request: RecordedRequest): number {
  const messages: Array<{ role: string; content: unknown }> = request.body?.messages ?? [];
  return messages
    .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
    .filter((block: { type?: string }) => block?.type === "tool_result").length;
}

/** The fake model's part in each case, by the `[case: ...]` its first message names. */
function answer(request: RecordedRequest): ScriptStep {
  const said = JSON.stringify(request.body?.messages ?? []);
  const done = toolResultCount(request);
  const last = lastToolResults(request)
    .map((result) => textOf(result.content))
    .join("\n");
  if (said.includes("[case: stall-delta]")) return { hangUntilAborted: true, text: "Thinking" };
  if (said.includes("[case: stall-silent]")) return { neverAnswer: true };
  if (said.includes("[case: mcp-hang]")) {
    return done === 0
      ? { toolUse: { name: "mcp__slow__hang", input: {} } }
      : { text: `After the hang: ${last}` };
  }
  if (said.includes("[case: hook]")) {
    return done === 0
      ? { toolUse: { name: "mcp__fake__add", input: { a: 2, b: 3 } } }
      : { text: `Added: ${last}` };
  }
  if (said.includes("[case: restart]")) {
    if (done === 0) return { toolUse: { name: "mcp__fake__crash", input: {} } };
    if (done === 1) return { toolUse: { name: "mcp__fake__echo", input: { text: "again" } } };
    return { text: `Echoed: ${last}` };
  }
  return { text: "(no case)" };
}

beforeAll(async () => {
  api = await startFakeMessagesApi({ fallback: answer });
  workspace = mkdtempSync(join(tmpdir(), "rudder-hangs-"));
  writeFileSync(
    join(workspace, ".mcp.json"),
    JSON.stringify({
      // "fake" has a per-server timeout long enough for a loaded machine; "slow", the hang's,
      // has the gateway's MCP_TOOL_TIMEOUT (0.3 s).
      mcpServers: {
        fake: { command: process.execPath, args: [FAKE_MCP_SERVER], timeout: 60_000 },
        slow: { command: process.execPath, args: [FAKE_MCP_SERVER] },
      },
    }),
  );
  mkdirSync(join(workspace, ".rudder"));
  writeFileSync(
    join(workspace, ".rudder", "settings.json"),
    JSON.stringify({
      permissions: { allow: ["mcp__fake", "mcp__slow"] },
      hooks: {
        PreToolUse: [
          {
            matcher: "mcp__fake__add",
            hooks: [{ type: "command", command: "exec sleep 30", timeout: 0.3 }],
          },
        ],
      },
    }),
  );
  gateway = await startRudderGateway({
    prefix: "hangs",
    apiUrl: api.url,
    workspace,
    args: ["--include-hook-events"],
    logger: (line) => logLines.push(line),
    env: {
      RUDDER_STREAM_IDLE_TIMEOUT_MS: "1000",
      RUDDER_MAX_RETRIES: "1",
      MCP_TOOL_TIMEOUT: "300",
    },
  });
});

afterAll(async () => {
  await gateway?.cleanup();
  await api?.close();
  rmSync(workspace, { recursive: true, force: true });
});

/** Posts `text` to `channel` and waits for its reply or error; returns the channel's messages. */
async function exchange(channel: string, text: string): Promise<ApiMessage[]> {
  const posted = await gateway.api("POST", `/api/channels/${channel}/messages`, { text });
  expect(posted.status).toBe(202);
  return waitFor(
    async () => {
      const messages = await gateway.messages(channel);
      return messages.some((message) => message.role === "assistant") ? messages : undefined;
    },
    `the answer on ${channel}`,
    20_000,
  );
}

describe.concurrent("hangs through the gateway", () => {
  it("fails a turn whose stream stalls after its first delta, twice, in plain words naming rudder", async () => {
    const messages = await exchange("stall-delta", "[case: stall-delta] think");
    expect(messages.at(-1)).toMatchObject({
      kind: "error",
      text:
        "The agent's turn failed: API Error: the Messages API sent nothing for 1 s on each " +
        "of 2 tries; rudder stopped waiting for the model (RUDDER_STREAM_IDLE_TIMEOUT_MS sets " +
        "how long it waits)",
    });
    const tried = api
      .mainRequests()
      .filter((request) => JSON.stringify(request.body).includes("stall-delta"));
    expect(tried).toHaveLength(2);
  });

  it("fails a turn whose request is never answered the same way", async () => {
    const messages = await exchange("stall-silent", "[case: stall-silent] anyone?");
    expect(messages.at(-1)?.kind).toBe("error");
    expect(messages.at(-1)?.text).toMatch(/sent nothing for 1 s on each of 2 tries; rudder/);
  });

  it("ends a hung MCP call at MCP_TOOL_TIMEOUT with a tool error, and the turn goes on", async () => {
    const messages = await exchange("mcp-hang", "[case: mcp-hang] hang");
    expect(messages.at(-1)?.kind).toBe("reply");
    expect(messages.at(-1)?.text).toBe(
      'After the hang: Error: MCP server "slow" did not answer the call to hang within 0.3 s, ' +
        'so rudder stopped waiting (MCP_TOOL_TIMEOUT, or the server\'s "timeout", sets the limit)',
    );
  });

  it("announces a hook past its timeout on the channel's events and in the log", async () => {
    const events = openEvents(`${gateway.url}/api/channels/hook/events?token=${gateway.token}`);
    try {
      const messages = await exchange("hook", "[case: hook] add");
      expect(messages.at(-1)).toMatchObject({ kind: "reply", text: "Added: 5" });
      const warning = await events.waitFor(
        (event) => event.data.type === "hook_warning",
        "the hook_warning event",
      );
      expect(warning.data).toMatchObject({
        channelId: "hook",
        event: "PreToolUse",
        message: 'hook "exec sleep 30" timed out after 0.3s',
      });
      expect(logLines).toContain(
        'gateway: channel hook: PreToolUse hook: hook "exec sleep 30" timed out after 0.3s',
      );
    } finally {
      await events.close();
    }
  });

  it("starts an MCP server that died again on its next use, and tells the model", async () => {
    const messages = await exchange("restart", "[case: restart] crash it");
    const reply = messages.at(-1);
    expect(reply?.kind).toBe("reply");
    expect(reply?.text).toBe(
      'Echoed: Note: MCP server "fake" had stopped (it exited with status 5) and was started ' +
        "again for this call; whatever it held from before is gone.\necho: again",
    );
    const afterCrash = api
      .mainRequests()
      .filter((request) => JSON.stringify(request.body).includes("[case: restart]"))
      .map((request) =>
        lastToolResults(request)
          .map((result) => textOf(result.content))
          .join(""),
      );
    expect(afterCrash[1]).toBe(
      'Error: MCP server "fake" is not running (it exited with status 5); its last stderr ' +
        "line: fake-mcp-server: crash tool called; it will be started again on its next use",
    );
  });
});
