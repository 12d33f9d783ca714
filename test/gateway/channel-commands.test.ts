/**
 * `/compact [focus]` and `/clear` on a channel, typed or through the API, with the fake
 * Claude CLI as the engine (it answers `/compact` as Claude Code 2.1.328 does).
 */
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/wait-for.js";
import {
  type ApiMessage,
  fakeLogEntries,
  openEvents,
  startTestGateway,
  type TestGateway,
} from "./helpers.js";

const gateways: TestGateway[] = [];
async function gatewayWith(options: Parameters<typeof startTestGateway>[0]) {
  const gateway = await startTestGateway(options);
  gateways.push(gateway);
  return gateway;
}
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gateway) => gateway.cleanup()));
});

interface ChannelInfo {
  id: string;
  sessionId: string | null;
  context: { tokens: number; window: number | null } | null;
}

async function channel(gateway: TestGateway, id: string): Promise<ChannelInfo | undefined> {
  const listed = await gateway.api<{ channels: ChannelInfo[] }>("GET", "/api/channels");
  return listed.body.channels.find((entry) => entry.id === id);
}

/** Posts `text` and waits until it is settled; resolves with the channel's messages. */
async function say(gateway: TestGateway, channelId: string, text: string): Promise<ApiMessage[]> {
  const posted = await gateway.api<{ id: string }>("POST", `/api/channels/${channelId}/messages`, {
    text,
  });
  return waitFor(async () => {
    const messages = await gateway.messages(channelId);
    const mine = messages.find((message) => message.id === posted.body.id);
    return mine?.state === "answered" || mine?.state === "failed" ? messages : undefined;
  }, `"${text}" settled`);
}

/**
 * The user texts the fake CLI processes read from stdin, in order; messages lose their
 * external-content fence, so an unfenced command shows as `!/compact`.
 */
function agentInputs(gateway: TestGateway): string[] {
  return fakeLogEntries(gateway.fakeLog)
    .filter((entry) => entry.event === "stdin")
    .map((entry) => (entry.message as { message?: { content?: unknown } }).message?.content)
    .filter((content): content is string => typeof content === "string")
    .map((content) => {
      const fenced = /^\[EXTERNAL CONTENT\]\n([\s\S]*)\n\[END EXTERNAL CONTENT\]$/.exec(content);
      return fenced ? (fenced[1] as string).replace(/^From: .*\n/, "") : `!${content}`;
    });
}

describe("compacting and resetting a channel's conversation", () => {
  it("POST compact sends /compact with the focus, answers the tokens before and after, and adds a divider", async () => {
    const gateway = await gatewayWith({ prefix: "compact-api" });
    await say(gateway, "work", "first");
    const before = await say(gateway, "work", "second");
    expect((await channel(gateway, "work"))?.context).toEqual({ tokens: 2000, window: 200_000 });

    const events = openEvents(`${gateway.url}/api/channels/work/events?token=${gateway.token}`);
    const compacted = await gateway.api("POST", "/api/channels/work/compact", {
      instructions: "keep the names",
    });
    expect(compacted).toEqual({
      status: 200,
      body: {
        command: "compact",
        preTokens: 2000,
        postTokens: 500,
        contextWindow: 200_000,
        sessionId: expect.any(String),
        message: expect.objectContaining({
          kind: "compaction",
          text: "Context compacted: 2k -> 500 tokens (focus: keep the names).",
        }),
      },
    });
    expect(agentInputs(gateway)).toEqual(["first", "second", "!/compact keep the names"]);
    expect((await channel(gateway, "work"))?.context).toEqual({ tokens: 500, window: 200_000 });
    await events.waitFor(
      (event) => event.data.type === "notice" && event.data.channelId === "work",
      "the divider's event",
    );
    await events.close();

    // The history is only added to: the same messages, then the divider.
    const after = await gateway.messages("work");
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((message) => message.kind)).toEqual(["compaction"]);

    // The conversation goes on in the same session.
    await say(gateway, "work", "third");
    expect((await channel(gateway, "work"))?.context?.tokens).toBe(1500);
  });

  it("typing /compact and /clear into the channel does the same, and /clear starts a new session", async () => {
    const gateway = await gatewayWith({ prefix: "compact-typed" });
    await say(gateway, "chat", "remember 42");
    const firstSession = (await channel(gateway, "chat"))?.sessionId;
    expect(firstSession).toEqual(expect.any(String));

    const posted = await gateway.api<{ disposition: string }>(
      "POST",
      "/api/channels/chat/messages",
      { text: "/compact" },
    );
    expect(posted.body.disposition).toBe("command");
    let messages = await waitFor(async () => {
      const list = await gateway.messages("chat");
      return list.some((message) => message.kind === "compaction") ? list : undefined;
    }, "the compaction divider");
    const typed = messages.find((message) => message.text === "/compact");
    expect(typed?.state).toBe("answered");
    expect(messages.find((message) => message.kind === "compaction")).toMatchObject({
      replyTo: typed?.id,
      text: "Context compacted: 1k -> 500 tokens.",
    });

    messages = await say(gateway, "chat", "/clear");
    expect(messages.at(-1)).toMatchObject({
      kind: "reset",
      text: `New conversation. The previous one (session ${firstSession}) stays on disk.`,
    });
    expect(await channel(gateway, "chat")).toMatchObject({ sessionId: null, context: null });
    expect((await gateway.api<{ runners: unknown[] }>("GET", "/api/runners")).body.runners).toEqual(
      [],
    );

    await say(gateway, "chat", "hello again");
    const starts = fakeLogEntries(gateway.fakeLog).filter((entry) => entry.event === "start");
    expect(starts).toHaveLength(2);
    expect(starts[1]?.args).not.toContain("--resume");
    const secondSession = (await channel(gateway, "chat"))?.sessionId;
    expect(secondSession).toEqual(expect.any(String));
    expect(secondSession).not.toBe(firstSession);
    // The fake never saw "/clear": a reset is the gateway's, for both engines.
    expect(agentInputs(gateway)).toEqual(["remember 42", "!/compact", "hello again"]);
  });

  it("waits for the turn in flight, and holds messages sent meanwhile until it is done", async () => {
    const gateway = await gatewayWith({ prefix: "compact-order", scenario: "hold" });
    await gateway.api("POST", "/api/channels/busy/messages", { text: "long job" });
    const runner = await waitFor(async () => {
      const runners = await gateway.api<{ runners: Array<{ pid: number | null }> }>(
        "GET",
        "/api/runners",
      );
      const held = agentInputs(gateway).includes("long job");
      return held ? runners.body.runners[0] : undefined;
    }, "the held turn");
    const compact = await gateway.api<{ disposition: string }>(
      "POST",
      "/api/channels/busy/messages",
      { text: "/compact the job" },
    );
    expect(compact.body.disposition).toBe("command");
    const later = await gateway.api<{ disposition: string }>(
      "POST",
      "/api/channels/busy/messages",
      {
        text: "after the compaction",
      },
    );
    expect(later.body.disposition).toBe("queued");
    expect(agentInputs(gateway)).toEqual(["long job"]);

    process.kill(runner.pid as number, "SIGUSR2");
    const messages = await waitFor(async () => {
      const list = await gateway.messages("busy");
      return list.filter((message) => message.state === "answered").length === 3 ? list : undefined;
    }, "all three answered");
    expect(agentInputs(gateway)).toEqual(["long job", "!/compact the job", "after the compaction"]);
    expect(messages.map((message) => message.kind)).toEqual([
      "user",
      "user",
      "user",
      "reply",
      "compaction",
      "reply",
    ]);
  });

  it("answers 404 for an unknown channel, 409 when there is nothing to compact, 400 for a bad body", async () => {
    const gateway = await gatewayWith({ prefix: "compact-errors" });
    expect(await gateway.api("POST", "/api/channels/nobody/compact", {})).toEqual({
      status: 404,
      body: { error: "no channel nobody" },
    });
    expect(await gateway.api("POST", "/api/channels/nobody/reset")).toEqual({
      status: 404,
      body: { error: "no channel nobody" },
    });
    await say(gateway, "fresh", "/clear");
    expect(await gateway.api("POST", "/api/channels/fresh/compact")).toEqual({
      status: 409,
      body: { error: "nothing to compact: the channel has no conversation yet" },
    });
    expect(await gateway.api("POST", "/api/channels/fresh/compact", { instructions: 7 })).toEqual({
      status: 400,
      body: { error: expect.stringContaining("instructions") },
    });
    const reset = await gateway.api("POST", "/api/channels/fresh/reset");
    expect(reset).toMatchObject({
      status: 200,
      body: { command: "reset", previousSessionId: null, message: { kind: "reset" } },
    });
  });
});
