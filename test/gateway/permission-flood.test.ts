// An agent that asks for permissions in a loop: at most a cap of requests wait per channel;
// past it each is denied at once, with a message the agent reads, and the channel's people are
// told once (a line in the history and the stream), not shown a card per request.
import { describe, expect, it } from "vitest";
import type { PermissionDecision } from "../../src/claude-cli/permission-request.js";
import { PermissionRequests } from "../../src/gateway/agents/permission-requests.js";
import { EventBus } from "../../src/gateway/event-bus.js";

function request(index: number) {
  return {
    requestId: `r${index}`,
    toolName: "Bash",
    input: { command: `rm file-${index}` },
    toolUseId: undefined,
    raw: {},
  };
}

describe("a flood of permission requests", () => {
  it("keeps at most the cap waiting per channel, denies the rest at once and says so once", async () => {
    const bus = new EventBus();
    const told: Array<{ channelId: string; text: string }> = [];
    const cards: string[] = [];
    bus.listen("flood", (numbered) => {
      if (numbered.event.type === "permission_request") cards.push(numbered.event.request.id);
    });
    const permissions = new PermissionRequests({
      bus,
      maxPendingPerChannel: 5,
      tell: (channelId, text) => told.push({ channelId, text }),
    });
    const waiting: Array<Promise<PermissionDecision>> = [];
    const refused: PermissionDecision[] = [];
    for (let index = 0; index < 50; index += 1) {
      const answer = permissions.ask("flood", request(index));
      if (index < 5) waiting.push(answer);
      else refused.push(await answer);
    }
    expect(refused).toHaveLength(45);
    for (const decision of refused) {
      expect(decision.behavior).toBe("deny");
      expect(decision.behavior === "deny" && decision.message).toMatch(
        /^Denied without asking: 5 permission requests of this channel already wait for a person/,
      );
    }
    expect(told).toEqual([{ channelId: "flood", text: expect.stringMatching(/more permissions/) }]);
    expect(await permissions.list("flood")).toHaveLength(5);
    expect(cards).toHaveLength(5);

    // Another channel asks as usual.
    const other = permissions.ask("calm", request(99));
    expect(await permissions.list("calm")).toHaveLength(1);

    // Once one is answered, one more may wait; once none waits, a new flood is told again.
    const [first] = await permissions.list("flood");
    await permissions.decide("flood", first?.id ?? "", "allow");
    expect(await waiting[0]).toEqual({ behavior: "allow" });
    const next = permissions.ask("flood", request(100));
    expect(await permissions.list("flood")).toHaveLength(5);
    permissions.expire("flood", "the turn ended");
    await Promise.all([...waiting, next]);
    for (let index = 0; index < 6; index += 1) void permissions.ask("flood", request(200 + index));
    expect(told).toHaveLength(2);
    permissions.close();
    expect((await other).behavior).toBe("deny");
  });
});
