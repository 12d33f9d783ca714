/**
 * `messageRoute`: the way a message goes on its channel, from the channel's state alone. A turn
 * abandoned as its lease ran out settles nothing, so a message must not steer it (it would be
 * marked steered and never answered here): it waits for the next turn like one that ended.
 */
import { describe, expect, it } from "vitest";
import type { ActiveTurn } from "../../src/gateway/routing/channel-state.js";
import { newChannelState } from "../../src/gateway/routing/channel-state.js";
import { messageRoute } from "../../src/gateway/routing/message-route.js";

const free = { rateLimited: false, mustWait: () => false };

function withTurn(turn: Partial<ActiveTurn>) {
  const channel = newChannelState("c");
  channel.turn = { ended: false, ...turn } as ActiveTurn;
  return channel;
}

describe("a message's route", () => {
  it("starts a turn on an idle channel and steers a running one", () => {
    expect(messageRoute(newChannelState("c"), null, free)).toBe("start");
    expect(messageRoute(withTurn({}), null, free)).toBe("steer");
  });

  it("waits for the next turn while the turn ends, or is abandoned as its lease ran out", () => {
    expect(messageRoute(withTurn({ ended: true }), null, free)).toBe("next");
    expect(messageRoute(withTurn({ abandoned: true }), null, free)).toBe("next");
  });
});
