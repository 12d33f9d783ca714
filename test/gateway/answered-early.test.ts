/**
 * A message the CLI queued as a turn of its own (written while the model streamed) is answered
 * by a second `result`: the first message is settled with its own answer as soon as it comes,
 * not when the queued turn ends too, so a gateway killed meanwhile does not run it again. The
 * messages one such result answers (one folded into the turn) share one reply, as they did
 * when the whole turn was settled at its end.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_CLAUDE } from "../helpers/fixtures.js";
import { waitFor } from "../helpers/wait-for.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gateway) => gateway.cleanup()));
});

/** The channel's messages, once the message `id` is in `state`. */
function once(gateway: TestGateway, channel: string, id: string, state: string) {
  return waitFor(async () => {
    const messages = await gateway.messages(channel);
    return messages.find((message) => message.id === id)?.state === state ? messages : undefined;
  }, `message ${id} ${state}`);
}

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
    await once(slow, "queued", first.body.id, "received");
    const second = await slow.api<{ id: string; disposition: string }>(
      "POST",
      "/api/channels/queued/messages",
      { text: "second question" },
    );
    expect(second.body.disposition).toBe("steered");

    const early = await once(slow, "queued", first.body.id, "answered");
    // Its answer is stored while the second message's turn is still running.
    expect(early.find((message) => message.id === second.body.id)?.state).toBe("steered");
    const firstReply = early.find((message) => message.replyTo === first.body.id);
    expect(firstReply?.kind).toBe("reply");
    expect(firstReply?.text).toContain("first answer:");
    expect(firstReply?.text).toContain("first question");
    expect(firstReply?.text).not.toContain("second question");

    const all = await once(slow, "queued", second.body.id, "answered");
    const replies = all.filter((message) => message.kind === "reply");
    expect(replies).toHaveLength(2);
    const secondReply = replies.find((message) => message.replyTo === second.body.id);
    expect(secondReply?.text).toContain("echo:");
    expect(secondReply?.text).toContain("second question");
    expect(secondReply?.text).not.toContain("first answer:");
  });

  it("gives the messages one result answered one reply, before the queued one's", async () => {
    const gateway = await startTestGateway({
      prefix: "answered-early-folded",
      engine: {
        claudeBin: FAKE_CLAUDE,
        env: {
          FAKE_CLAUDE_SCENARIO: "steer_folded_and_queued",
          FAKE_CLAUDE_REPLY_DELAY_MS: "1500",
        },
      },
    });
    gateways.push(gateway);
    const post = (text: string) =>
      gateway.api<{ id: string; disposition: string }>("POST", "/api/channels/folded/messages", {
        text,
      });
    const first = await post("alpha");
    await once(gateway, "folded", first.body.id, "received");
    const folded = await post("beta");
    const queued = await post("gamma");
    expect([folded.body.disposition, queued.body.disposition]).toEqual(["steered", "steered"]);

    const early = await once(gateway, "folded", folded.body.id, "answered");
    expect(early.find((message) => message.id === first.body.id)?.state).toBe("answered");
    expect(early.find((message) => message.id === queued.body.id)?.state).toBe("steered");
    // One reply for the two, as the one result that answered them.
    const replies = early.filter((message) => message.kind === "reply");
    expect(replies.map((reply) => reply.replyTo)).toEqual([first.body.id]);
    expect(replies[0]?.text).toContain("both answered: ");

    const all = await once(gateway, "folded", queued.body.id, "answered");
    const later = all.filter((message) => message.kind === "reply");
    expect(later.map((reply) => reply.replyTo)).toEqual([first.body.id, queued.body.id]);
    expect(later[1]?.text).toContain("gamma");
    expect(later[1]?.text).not.toContain("both answered");
  });
});
