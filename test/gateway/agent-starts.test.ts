// AgentStarts: agent processes start one per turn of the event loop, in the order asked, and
// not while a message is being stored (for a bounded time), so admission never waits behind a
// burst of spawns.
import { describe, expect, it } from "vitest";
import { AgentStarts } from "../../src/gateway/routing/agent-starts.js";
import { waitFor } from "../helpers/wait-for.js";

describe("AgentStarts", () => {
  it("lets starts go in the order asked, never two in one run of microtasks", async () => {
    const starts = new AgentStarts();
    const order: number[] = [];
    const seenTogether: number[] = [];
    const all = [0, 1, 2, 3].map((index) =>
      starts.next().then(async () => {
        order.push(index);
        // The start happens here, synchronously: no other start may be let go before the
        // microtasks of this one have run out.
        const before = order.length;
        for (let round = 0; round < 20; round += 1) await Promise.resolve();
        seenTogether.push(order.length - before);
      }),
    );
    expect(starts.size).toBe(4);
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2, 3]);
    expect(seenTogether).toEqual([0, 0, 0, 0]);
  });

  it("holds starts while a message is being stored, and lets them go once it is", async () => {
    let admitting = true;
    let asked = 0;
    const starts = new AgentStarts({
      admitting: () => {
        asked += 1;
        return admitting;
      },
      maxDeferMs: 60_000,
    });
    let started = false;
    const next = starts.next().then(() => {
      started = true;
    });
    await waitFor(() => asked >= 3, "the start asked three times whether a message is stored");
    expect(started).toBe(false);
    admitting = false;
    await next;
    expect(started).toBe(true);
  });

  it("waits for messages being stored only so long: a steady stream cannot hold agents back", async () => {
    const starts = new AgentStarts({ admitting: () => true, maxDeferMs: 20 });
    await starts.next();
    await starts.next();
  });

  it("lets every waiting start go at close (they then find the router closed)", async () => {
    const starts = new AgentStarts({ admitting: () => true, maxDeferMs: 60_000 });
    const waiting = [starts.next(), starts.next()];
    starts.close();
    await Promise.all(waiting);
    await starts.next();
    expect(starts.size).toBe(0);
  });
});
