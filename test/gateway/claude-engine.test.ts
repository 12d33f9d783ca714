/**
 * The gateway with the real Claude Code CLI as its engine (`rudder serve
 * --engine claude`), against the fake Messages API: a message is answered,
 * the next one is answered by the same kept process, the page's events carry
 * the CLI's tool calls, and the channel remembers the CLI's session; /compact goes to
 * Claude Code's own /compact and a reset starts a new Claude Code session.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { echoFallback, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import { compactThenReset } from "./compact-reset-scenario.js";
import { openEvents, startTestGateway, type TestGateway } from "./helpers.js";

const repository = join(import.meta.dirname, "..", "..");
let claudeBin = "";
let gateway: TestGateway | undefined;
let sandbox = "";

beforeAll(() => {
  claudeBin = execFileSync(
    "bash",
    [join(repository, "scripts", "install-claude-code.sh"), "--print-path"],
    {
      encoding: "utf8",
    },
  ).trim();
  sandbox = mkdtempSync(join(tmpdir(), "rudder-claude-engine-"));
  for (const folder of ["home", "tmp", "workspace"]) mkdirSync(join(sandbox, folder));
}, 300_000);

afterAll(async () => {
  await gateway?.cleanup();
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
  const api = await startFakeMessagesApi({
    script: [
      {
        toolUse: { name: "Bash", input: { command: "echo from-claude-tool", description: "echo" } },
      },
      { text: "The tool said from-claude-tool." },
      { text: "Second answer." },
    ],
    fallback: echoFallback,
  });
  try {
    gateway = await startTestGateway({
      prefix: "claude-engine",
      engine: {
        claudeBin,
        cwd: join(sandbox, "workspace"),
        args: ["--permission-mode", "bypassPermissions"],
        env: claudeEnv(api.url),
      },
      permissionPrompts: false,
    });
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
  } finally {
    await api.close();
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
