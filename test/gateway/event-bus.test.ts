import { describe, expect, it } from "vitest";
import { EventBus } from "../../src/gateway/event-bus.js";
import type { GatewayEvent } from "../../src/gateway/events.js";

const delta = (channelId: string, text: string): GatewayEvent => ({
  type: "text_delta",
  text,
  channelId,
});

describe("EventBus", () => {
  it("numbers events per channel and replays after Last-Event-ID", () => {
    const bus = new EventBus({ bufferSize: 3 });
    for (const text of ["a", "b", "c", "d"]) bus.publish(delta("one", text));
    bus.publish(delta("two", "x"));
    expect(bus.replay("one").map((numbered) => numbered.id)).toEqual([2, 3, 4]);
    expect(bus.replay("one", 3).map((numbered) => numbered.id)).toEqual([4]);
    expect(bus.replay("two").map((numbered) => numbered.id)).toEqual([1]);
  });

  it("keeps at most maxChannels logs, dropping the least recently used idle ones", () => {
    const bus = new EventBus({ maxChannels: 3 });
    const seen: string[] = [];
    const unsubscribe = bus.subscribe("watched", (numbered) => {
      seen.push(numbered.event.type === "text_delta" ? numbered.event.text : "");
    });
    bus.publish(delta("watched", "first"));
    for (let index = 0; index < 50; index++) bus.publish(delta(`channel-${index}`, "x"));
    expect(bus.channelCount()).toBe(3);
    expect(bus.replay("channel-49")).toHaveLength(1);
    expect(bus.replay("channel-0")).toEqual([]);
    bus.publish(delta("watched", "second"));
    expect(seen).toEqual(["first", "second"]);
    expect(bus.replay("watched").map((numbered) => numbered.id)).toEqual([1, 2]);
    unsubscribe();
  });
});
