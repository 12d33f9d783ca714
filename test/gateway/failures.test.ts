import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/wait-for.js";
import {
  fakeLogEntries,
  fakeStarted,
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

describe("failures are shown and nothing the user said is lost", () => {
  it("rate limit: an immediate fallback reply, the message deferred, then retried", async () => {
    // maxLive 0: every turn runs in a fresh process, so the scenario switch takes effect.
    const gateway = await gatewayWith({
      prefix: "ratelimit",
      scenario: "rate_limit",
      maxLive: 0,
      rateLimitRetryMs: 1000,
    });
    const first = await gateway.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/limited/messages",
      { text: "are you there" },
    );
    expect(first.body.disposition).toBe("one_shot");
    const fallback = await waitFor(async () => {
      const messages = await gateway.messages("limited");
      return messages.find((message) => message.kind === "fallback");
    }, "the fallback reply");
    expect(fallback.replyTo).toBe(first.body.id);
    expect(fallback.text).toContain("rate limit");
    expect(fallback.text).toMatch(/retried at \d{4}-\d{2}-\d{2}T/);
    const deferred = (await gateway.messages("limited")).find(
      (message) => message.id === first.body.id,
    );
    expect(deferred?.state).toBe("deferred");

    const second = await gateway.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/limited/messages",
      { text: "still there?" },
    );
    expect(second.body.disposition).toBe("deferred");

    gateway.setScenario("normal");
    const messages = await waitFor(async () => {
      const all = await gateway.messages("limited");
      const users = all.filter((message) => message.kind === "user");
      return users.every((message) => message.state === "answered") ? all : undefined;
    }, "both messages answered after the retry");
    const replies = messages.filter((message) => message.kind === "reply");
    expect(replies.map((reply) => reply.text).join("\n")).toContain("are you there");
    expect(replies.map((reply) => reply.text).join("\n")).toContain("still there?");
  });

  it("timeout: the user sees an error and the steered message is dispatched again", async () => {
    const gateway = await gatewayWith({
      prefix: "timeout",
      scenario: "timeout",
      turnTimeoutMs: 3000,
    });
    const first = await gateway.api<{ id: string }>("POST", "/api/channels/slow/messages", {
      text: "take your time",
    });
    const second = await gateway.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/slow/messages",
      { text: "and this too" },
    );
    expect(second.body.disposition).toBe("steered");
    await waitFor(async () => {
      const messages = await gateway.messages("slow");
      return messages.find((message) => message.id === second.body.id)?.state === "steered";
    }, "the second message steered");
    await fakeStarted(gateway.fakeLog, "timeout");
    gateway.setScenario("normal");

    const messages = await waitFor(async () => {
      const all = await gateway.messages("slow");
      const secondState = all.find((message) => message.id === second.body.id)?.state;
      return secondState === "answered" ? all : undefined;
    }, "the steered message answered by a new turn");
    const firstMessage = messages.find((message) => message.id === first.body.id);
    expect(firstMessage?.state).toBe("failed");
    const error = messages.find((message) => message.kind === "error");
    expect(error).toMatchObject({ replyTo: first.body.id, role: "assistant" });
    expect(error?.text).toContain("timed out after 3s");
    const reply = messages.find((message) => message.kind === "reply");
    expect(reply).toMatchObject({ replyTo: second.body.id });
    expect(reply?.text).toContain("and this too");
  });

  it("a crashed turn: the user sees the error; the channel works afterwards", async () => {
    const gateway = await gatewayWith({ prefix: "crash", scenario: "crash_mid_turn" });
    const first = await gateway.api<{ id: string }>("POST", "/api/channels/crashy/messages", {
      text: "crash please",
    });
    const error = await waitFor(async () => {
      const messages = await gateway.messages("crashy");
      return messages.find((message) => message.kind === "error");
    }, "the error message");
    expect(error.replyTo).toBe(first.body.id);
    expect(error.text).toMatch(/^The agent process crashed: /);
    await fakeStarted(gateway.fakeLog, "crash_mid_turn");
    gateway.setScenario("normal");
    await gateway.api("POST", "/api/channels/crashy/messages", { text: "better now?" });
    await waitFor(async () => {
      const messages = await gateway.messages("crashy");
      return messages.some(
        (message) => message.kind === "reply" && message.text.includes("better now?"),
      );
    }, "the next message answered");
    const states = (await gateway.messages("crashy"))
      .filter((message) => message.kind === "user")
      .map((message) => message.state);
    expect(states).toEqual(["failed", "answered"]);
  });

  it("a reply line over the cap fails the turn at once; a message sent meanwhile is answered", async () => {
    const gateway = await gatewayWith({ prefix: "overcap", scenario: "over_cap_line" });
    const first = await gateway.api<{ id: string }>("POST", "/api/channels/long/messages", {
      text: "write me a novel",
    });
    await waitFor(
      () => fakeLogEntries(gateway.fakeLog).some((entry) => entry.event === "sigterm_delayed"),
      "the runner ending the agent that wrote the long line",
    );
    const second = await gateway.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/long/messages",
      { text: "a short one then" },
    );
    const messages = await waitFor(async () => {
      const all = await gateway.messages("long");
      const settled = (id: string) => {
        const state = all.find((message) => message.id === id)?.state;
        return state === "answered" || state === "failed";
      };
      // Both are settled in their own time: the second may be answered before the first's
      // failure is written.
      return settled(first.body.id) && settled(second.body.id) ? all : undefined;
    }, "both messages settled");
    const byId = (id: string) => messages.find((message) => message.id === id);
    expect(byId(first.body.id)?.state).toBe("failed");
    expect(byId(second.body.id)?.state).toBe("answered");
    const error = messages.find((message) => message.kind === "error");
    expect(error?.replyTo).toBe(first.body.id);
    expect(error?.text).toContain("longer than the runner's cap");
    expect(error?.text).toContain("16 MiB");
    const reply = messages.find((message) => message.kind === "reply");
    expect(reply?.replyTo).toBe(second.body.id);
    expect(reply?.text).toContain("a short one then");
  });

  it("a line over the cap while no turn runs is reported in the channel, with its size", async () => {
    const logged: string[] = [];
    const gateway = await gatewayWith({
      prefix: "overcap-idle",
      scenario: "over_cap_between_turns",
      logger: (line) => logged.push(line),
    });
    const events = openEvents(`${gateway.url}/api/channels/idle/events?token=${gateway.token}`);
    try {
      const first = await gateway.api<{ id: string }>("POST", "/api/channels/idle/messages", {
        text: "answer, then say too much",
      });
      const notice = await events.waitFor(
        (event) => event.data.type === "error" && JSON.stringify(event.data).includes("dropped"),
        "the notice of the dropped line",
      );
      const text = (notice.data as unknown as { message: { text: string; replyTo: string | null } })
        .message;
      expect(text.text).toMatch(
        /^The agent wrote an "assistant" line of \d{8} characters \(19\.1 MiB\) between turns, over the runner's cap of 16 MiB, so it was dropped unread/,
      );
      expect(text.replyTo).toBeNull();
      expect(logged.filter((line) => line.includes("dropped unread"))).toEqual([
        `gateway: channel idle: ${text.text}`,
      ]);
      const messages = await gateway.messages("idle");
      expect(messages.find((message) => message.id === first.body.id)?.state).toBe("answered");
      expect(messages.map((message) => message.kind)).toEqual(["user", "reply", "error"]);
      // The agent is still there and answers the next message.
      await gateway.api("POST", "/api/channels/idle/messages", { text: "still there?" });
      await waitFor(async () => {
        const all = await gateway.messages("idle");
        return all.some((message) => message.kind === "reply" && message.text.includes("still"));
      }, "the next message answered");
    } finally {
      await events.close();
    }
  });
});
