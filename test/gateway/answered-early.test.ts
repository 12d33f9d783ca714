/**
 * A message the CLI queued as a turn of its own (written while the model streamed) is answered
 * by a second `result`: the first message is settled with its own answer as soon as it comes,
 * not when the queued turn ends too, so a gateway killed meanwhile does not run it again.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_CLAUDE } from "../claude-cli/helpers.js";
import { startTestGateway, type TestGateway, waitFor } from "./helpers.js";

const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gateway) => gateway.cleanup()));
});

describe("a turn the CLI answers with two results", () => {
  it("settles the first message with its own answer while the queued one still runs", async () => {
    // The queued message's own turn takes 1.5 s (steer_queued shapes the first turn only).
    const slow = await startTestGateway({
      prefix: "answered-early",
      engine: {
        claudeBin: FAKE_CLAUDE,
        env: { FAKE_CLAUDE_SCENARIO: "steer_queued", FAKE_CLAUDE_REPLY_DELAY_MS: "1500" },
      },
    });
    gateways.push(slow);
    const first = await slow.api<{ id: string }>("POST", "/api/channels/queued/messages", {
      text: "first question",
    });
    await waitFor(async () => {
      const messages = await slow.messages("queued");
      return messages.find((message) => message.id === first.body.id)?.state === "received";
    }, "the first message handed over");
    const second = await slow.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/queued/messages",
      { text: "second question" },
    );
    expect(second.body.disposition).toBe("steered");

    /** The channel's messages, once the message `id` is answered. */
    const answered = (id: string, what: string) =>
      waitFor(async () => {
        const messages = await slow.messages("queued");
        return messages.find((message) => message.id === id)?.state === "answered"
          ? messages
          : undefined;
      }, what);
    const early = await answered(first.body.id, "the first message answered");
    // Its answer is stored while the second message's turn is still running.
    expect(early.find((message) => message.id === second.body.id)?.state).toBe("steered");
    const firstReply = early.find((message) => message.replyTo === first.body.id);
    expect(firstReply?.kind).toBe("reply");
    expect(firstReply?.text).toContain("first answer:");
    expect(firstReply?.text).toContain("first question");
    expect(firstReply?.text).not.toContain("second question");

    const all = await answered(second.body.id, "the second message answered");
    const replies = all.filter((message) => message.kind === "reply");
    expect(replies).toHaveLength(2);
    const secondReply = replies.find((message) => message.replyTo === second.body.id);
    expect(secondReply?.text).toContain("echo:");
    expect(secondReply?.text).toContain("second question");
    expect(secondReply?.text).not.toContain("first answer:");
  });
});
