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
    // The first event is gone: a replay from the start says so before the rest.
    const replayed = bus.replay("one");
    expect(replayed.map((numbered) => numbered.id)).toEqual([1, 2, 3, 4]);
    expect(replayed[0]?.event).toMatchObject({
      type: "events_dropped",
      through: 1,
      resumed: false,
    });
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

  it("keeps a channel's buffer under its byte limit, and a late subscriber is told of the gap", () => {
    const limit = 256 * 1024;
    const bus = new EventBus({ bufferBytes: limit });
    const live: number[] = [];
    const unsubscribe = bus.subscribe("big", (numbered) => live.push(numbered.id));
    bus.publish(delta("big", "before"));
    // A 2 MB reply, in 64 KiB deltas and then whole in one event, as its `reply` carries it.
    const reply = "x".repeat(2 * 1024 * 1024);
    for (let start = 0; start < reply.length; start += 64 * 1024) {
      bus.publish(delta("big", reply.slice(start, start + 64 * 1024)));
      expect(bus.bufferedBytes("big")).toBeLessThanOrEqual(limit);
    }
    bus.publish({
      type: "reply",
      channelId: "big",
      message: {
        id: "reply-1",
        channelId: "big",
        role: "assistant",
        text: reply,
        state: null,
        replyTo: "message-1",
        kind: "reply",
        createdAt: new Date().toISOString(),
      },
    });
    bus.publish(delta("big", "after"));
    expect(bus.bufferedBytes("big")).toBeLessThanOrEqual(limit);
    // Every event went out live, the largest too.
    expect(live).toEqual(Array.from({ length: 35 }, (_, index) => index + 1));
    unsubscribe();

    const late = bus.replay("big");
    expect(late[0]?.event).toMatchObject({ type: "events_dropped", through: 34, resumed: false });
    expect(late.at(-1)?.event).toMatchObject({ type: "text_delta", text: "after" });
    // A client that had seen the first event resumes into the gap: told to reload.
    const resumed = bus.replay("big", 1);
    expect(resumed[0]?.event).toMatchObject({ type: "events_dropped", resumed: true });
    // One that had seen everything up to the gap's end gets no such note.
    expect(bus.replay("big", 34).map((numbered) => numbered.event.type)).toEqual(["text_delta"]);
  });
});
