/**
 * The gateway with the real Claude Code CLI as its engine (`rudder serve
 * --engine claude`), against the fake Messages API: a message is answered,
 * the next one is answered by the same kept process, the page's events carry
 * the CLI's tool calls, and the channel remembers the CLI's session; /compact goes to
 * Claude Code's own /compact and a reset starts a new Claude Code session; a turn that crosses
 * its channel's budget is interrupted at its next model call, with a line saying so.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GatewayBindings } from "../../src/gateway/bindings/bindings.js";
import type { SpendReport } from "../../src/gateway/budgets/spend-report.js";
import { costUsd } from "../../src/model/pricing.js";
import { claudeCodeBinary } from "../helpers/claude-code-env.js";
import {
  echoFallback,
  type FakeMessagesApi,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import { compactThenReset } from "./compact-reset-scenario.js";
import { openEvents, startTestGateway, type TestGateway } from "./helpers.js";

let claudeBin = "";
let gateway: TestGateway | undefined;
/** The first gateway's fake API and bindings, which the budget case goes on with. */
let api: FakeMessagesApi | undefined;
let bindings: GatewayBindings | undefined;
let sandbox = "";

beforeAll(() => {
  claudeBin = claudeCodeBinary();
  sandbox = mkdtempSync(join(tmpdir(), "rudder-claude-engine-"));
  for (const folder of ["home", "tmp", "workspace"]) mkdirSync(join(sandbox, folder));
}, 300_000);

afterAll(async () => {
  await gateway?.cleanup();
  await api?.close();
  rmSync(sandbox, { recursive: true, force: true });
});

/** Claude Code against the fake Messages API, kept inside the sandbox folder. */
function claudeEnv(apiUrl: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: "dummy",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    IS_SANDBOX: "1",
    HOME: join(sandbox, "home"),
    CLAUDE_CONFIG_DIR: join(sandbox, "home", ".claude"),
    TMPDIR: join(sandbox, "tmp"),
    CLAUDE_CODE_TMPDIR: join(sandbox, "tmp"),
    RUDDER_MAX_RETRIES: "0",
  };
}

it("answers channel messages through a kept Claude Code process, tool calls included", async () => {
  api = await startFakeMessagesApi({
    script: [
      {
        toolUse: { name: "Bash", input: { command: "echo from-claude-tool", description: "echo" } },
      },
      { text: "The tool said from-claude-tool." },
      { text: "Second answer." },
    ],
    fallback: echoFallback,
  });
  bindings = new GatewayBindings(undefined, { cwd: join(sandbox, "workspace"), engine: "claude" });
  gateway = await startTestGateway({
    prefix: "claude-engine",
    engine: {
      claudeBin,
      cwd: join(sandbox, "workspace"),
      args: ["--permission-mode", "bypassPermissions"],
      env: claudeEnv(api.url),
    },
    permissionPrompts: false,
    bindings,
    priceUsage: costUsd,
  });
  {
    const events = openEvents(`${gateway.url}/api/channels/cc/events?token=${gateway.token}`);
    const first = await gateway.api<{ disposition: string }>("POST", "/api/channels/cc/messages", {
      text: "run the tool",
    });
    expect(first.body.disposition).toBe("started");
    await waitFor(
      async () => {
        const list = await gateway?.messages("cc");
        return list?.some((message) => message.kind === "reply") ? list : undefined;
      },
      "the first reply",
      60_000,
    );
    await events.waitFor(
      (event) =>
        event.data.type === "tool_end" && JSON.stringify(event.data).includes("from-claude-tool"),
      "the Bash tool's result on the event stream",
    );

    const runners = await gateway.api<{ runners: Array<{ channelId: string; pid: number }> }>(
      "GET",
      "/api/runners",
    );
    const pid = runners.body.runners.find((runner) => runner.channelId === "cc")?.pid;
    expect(pid).toEqual(expect.any(Number));

    await gateway.api("POST", "/api/channels/cc/messages", { text: "and again" });
    const messages = await waitFor(
      async () => {
        const list = await gateway?.messages("cc");
        return list?.filter((message) => message.kind === "reply").length === 2 ? list : undefined;
      },
      "the second reply",
      60_000,
    );
    expect(messages.map((message) => [message.kind, message.text])).toEqual([
      ["user", "run the tool"],
      ["reply", "The tool said from-claude-tool."],
      ["user", "and again"],
      ["reply", "Second answer."],
    ]);
    const again = await gateway.api<{ runners: Array<{ channelId: string; pid: number }> }>(
      "GET",
      "/api/runners",
    );
    expect(again.body.runners.find((runner) => runner.channelId === "cc")?.pid).toBe(pid);
    const channels = await gateway.api<{
      channels: Array<{ id: string; sessionId: string | null }>;
    }>("GET", "/api/channels");
    expect(channels.body.channels.find((channel) => channel.id === "cc")?.sessionId).toEqual(
      expect.any(String),
    );
    await events.close();
  }
});

it("compacts through Claude Code's own /compact and resets to a new Claude Code session", async () => {
  const api = await startFakeMessagesApi({ fallback: echoFallback });
  const own = await startTestGateway({
    prefix: "claude-engine-compact",
    engine: {
      claudeBin,
      cwd: join(sandbox, "workspace"),
      env: claudeEnv(api.url),
    },
    permissionPrompts: false,
  });
  try {
    expect(await compactThenReset(own, api, "cc2", 60_000)).toEqual([
      "user",
      "reply",
      "compaction",
      "reset",
      "user",
      "reply",
    ]);
  } finally {
    await own.cleanup();
    await api.close();
  }
});

it("interrupts a Claude Code turn that crosses its budget at its next model call", async () => {
  if (!gateway || !api || !bindings) throw new Error("the first case's gateway is needed");
  const { body } = await gateway.api<SpendReport>("GET", "/api/spend");
  // A token more than channel cc spent so far: its next turn starts, and its first call crosses
  // it (tokens: the fake model's name has no price). Its kept process goes on (a budget is not
  // what an agent is made of).
  const limit = body.gateway.today.tokens + 1;
  bindings.replace({
    file: "test.json",
    hash: "budget",
    config: { budget: { dailyTokens: limit } },
  });
  api.push(
    { toolUse: { name: "Bash", input: { command: "printf kept > first.txt", description: "a" } } },
    {
      delayMs: 600,
      // biome-ignore lint/suspicious/noThenProperty: the fake API names its delayed step so.
      then: { toolUse: { name: "Bash", input: { command: "touch second.txt", description: "b" } } },
    },
  );
  const posted = await gateway.api<{ id: string }>("POST", "/api/channels/cc/messages", {
    text: "write two files",
  });
  const reply = await waitFor(
    async () => {
      const messages = await gateway?.messages("cc");
      if (messages?.find((each) => each.id === posted.body.id)?.state !== "failed") return;
      return messages.findLast((each) => each.replyTo === posted.body.id);
    },
    "the turn stopped",
    60_000,
  );
  expect(reply.text).toMatch(
    /^Budget reached: the daily limit of the gateway is [\d,]+ tokens, and [\d,]+ tokens was spent today\. The agent was stopped before its next model call; what it did so far is kept\./,
  );
  const workspace = join(sandbox, "workspace");
  expect(readFileSync(join(workspace, "first.txt"), "utf8")).toBe("kept");
  expect(existsSync(join(workspace, "second.txt"))).toBe(false);
});
