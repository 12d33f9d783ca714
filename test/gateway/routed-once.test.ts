import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RegistryProcessPool } from "../../src/gateway/agents/process-pool.js";
import { EventBus } from "../../src/gateway/event-bus.js";
import type { GatewayEvent } from "../../src/gateway/events.js";
import { Router } from "../../src/gateway/routing/router.js";
import { SqliteGatewayStore } from "../../src/gateway/store/sqlite/sqlite-store.js";
import type { MessageRecord } from "../../src/gateway/store/store.js";
import { FAKE_CLAUDE } from "../helpers/fixtures.js";
import { startInProcessRouter } from "../helpers/in-process-router.js";
import { waitFor } from "../helpers/wait-for.js";
import { fakeLogEntries } from "./helpers.js";

/**
 * A real SQLite store whose `insertUserMessage` commits the row at once but resolves only when
 * the test says: the window in which a catch-up pass can list the new message.
 */
class HeldInsertStore extends SqliteGatewayStore {
  readonly #inserted: Array<(message: MessageRecord) => void> = [];
  #release: (() => void) | undefined;
  #held: Promise<void> | undefined;

  hold(): { inserted: Promise<MessageRecord>; release: () => void } {
    this.#held = new Promise((resolve) => {
      this.#release = resolve;
    });
    const inserted = new Promise<MessageRecord>((resolve) => this.#inserted.push(resolve));
    return { inserted, release: () => this.#release?.() };
  }

  override async insertUserMessage(
    channelId: string,
    text: string,
    source: string,
    handedTo?: string,
  ): Promise<MessageRecord> {
    const message = await super.insertUserMessage(channelId, text, source, handedTo);
    this.#inserted.shift()?.(message);
    await this.#held;
    return message;
  }

  readonly #listed: Array<() => void> = [];
  #listingHeld: Promise<void> | undefined;

  /** The same for the next `listDeferred` (a rate-limit retry reading what it retries). */
  holdListing(): { listed: Promise<void>; release: () => void } {
    let release = () => {};
    this.#listingHeld = new Promise((resolve) => {
      release = resolve;
    });
    const listed = new Promise<void>((resolve) => this.#listed.push(resolve));
    return { listed, release: () => release() };
  }

  override async listDeferred(): Promise<MessageRecord[]> {
    const deferred = await super.listDeferred();
    this.#listed.shift()?.();
    await this.#listingHeld;
    return deferred;
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Lines of the fake CLI's stdin that carry `text` in a user message. */
function prompts(fakeLog: string, text: string) {
  return fakeLogEntries(fakeLog).filter((entry) => {
    const message = entry.message as { type?: string; message?: { content?: unknown } };
    return (
      entry.event === "stdin" &&
      message.type === "user" &&
      JSON.stringify(message.message?.content).includes(text)
    );
  });
}

function fakePool(fakeLog: string, replyDelayMs: number, scenario = "normal") {
  return new RegistryProcessPool({
    maxLive: 2,
    idleMinutes: 1,
    processOptions: {
      claudeBin: FAKE_CLAUDE,
      env: {
        FAKE_CLAUDE_LOG: fakeLog,
        FAKE_CLAUDE_REPLY_DELAY_MS: String(replyDelayMs),
        FAKE_CLAUDE_SCENARIO: scenario,
      },
    },
    logger: () => {},
  });
}

/** Slow enough (300 ms by default) that a second dispatch finds the turn in flight. */
async function routerOnHeldStore(replyDelayMs = 300, scenario = "normal") {
  const root = mkdtempSync(join(tmpdir(), "rudder-routed-once-"));
  const fakeLog = join(root, "fake.log");
  const store = new HeldInsertStore(join(root, "gateway.db"));
  const bus = new EventBus();
  const pool = fakePool(fakeLog, replyDelayMs, scenario);
  const { router, close } = await startInProcessRouter(
    { store, pool, bus, rateLimitRetryMs: 300 },
    root,
  );
  cleanups.push(close);
  return { store, bus, pool, router, fakeLog };
}

describe("a stored message is dispatched once", () => {
  it("when a catch-up pass routes it while its delivery's insert is still resolving", async () => {
    const { store, bus, router, fakeLog } = await routerOnHeldStore();
    const received: GatewayEvent[] = [];
    bus.listen("c1", ({ event }) => {
      if (event.type === "message_received") received.push(event);
    });
    const { inserted, release } = store.hold();
    const delivering = router.deliver("c1", "only once please");
    const stored = await inserted;
    // The catch-up pass (`ChannelOwnership.revalidate`): the row is committed, so it is listed.
    const listed = (await store.listUnanswered()).find((message) => message.id === stored.id);
    expect(listed).toBeDefined();
    const routed = router.routeStored(listed as MessageRecord);
    release();
    const delivery = await delivering;

    const settled = await router.settled(stored.id);
    expect(settled.state).toBe("answered");
    await router.idle();
    expect(prompts(fakeLog, "only once please")).toHaveLength(1);
    expect(received).toHaveLength(1);
    // The client is told what happened to it: the route the catch-up chose.
    expect(routed).toBe("started");
    expect(delivery).toEqual({ id: stored.id, disposition: "started" });
  });

  it("when its delivery dispatches it before a catch-up pass routes it again", async () => {
    const { store, router, fakeLog } = await routerOnHeldStore();
    const delivery = await router.deliver("c1", "first come");
    const listed = (await store.listUnanswered()).find((message) => message.id === delivery.id);
    expect(listed).toBeDefined();
    expect(router.routeStored(listed as MessageRecord)).toBe("started");
    expect(delivery.disposition).toBe("started");
    expect((await router.settled(delivery.id)).state).toBe("answered");
    await router.idle();
    const users = fakeLogEntries(fakeLog).filter(
      (entry) => entry.event === "stdin" && (entry.message as { type?: string }).type === "user",
    );
    expect(users).toHaveLength(1);
  });

  it("by the next start when its insert finishes after close() began, not by the closing router", async () => {
    const { store, bus, pool, router, fakeLog } = await routerOnHeldStore(2_000);
    const first = await router.deliver("c1", "the turn in flight");
    expect(first.disposition).toBe("started");
    const { inserted, release } = store.hold();
    const delivering = router.deliver("c1", "sent as the gateway stops");
    const stored = await inserted;
    const closing = router.close();
    release();
    const delivery = await delivering;
    await closing;
    // Stored, and said so: not a steer of a turn whose agent is being stopped.
    expect(delivery).toEqual({ id: stored.id, disposition: "stored" });
    await pool.stopAll();
    await router.idle();
    expect(prompts(fakeLog, "sent as the gateway stops")).toHaveLength(0);
    expect((await store.getMessage(stored.id))?.state).toBe("received");

    // The next start answers it, once.
    const nextPool = fakePool(fakeLog, 0);
    const next = new Router({ store, pool: nextPool, bus });
    cleanups.push(async () => {
      await next.close();
      await nextPool.stopAll();
      await next.idle();
    });
    const answers = Promise.all([next.settled(first.id), next.settled(stored.id)]);
    await next.start();
    expect((await answers).map((settled) => settled.state)).toEqual(["answered", "answered"]);
    await next.idle();
    expect(prompts(fakeLog, "sent as the gateway stops")).toHaveLength(1);
  });

  it("not by a turn abandoned before its agent started (its lease ran out): routed again, answered once", async () => {
    const { store, router, fakeLog } = await routerOnHeldStore(0);
    const text = "sent as the lease ran out";
    const delivery = await router.deliver("c1", text);
    expect(delivery.disposition).toBe("started");
    // Before its start's turn came (`AgentStarts`), the lease lapsed (`ChannelOwnership`).
    expect(router.abandon("c1")).toBe(true);
    await router.idle();
    expect(prompts(fakeLog, text)).toHaveLength(0);
    const left = await store.getMessage(delivery.id);
    expect(left?.state).toBe("received");
    // The channel is this worker's again (the next renewal kept it): its message goes again.
    expect(router.routeStored(left as MessageRecord)).toBe("started");
    expect((await router.settled(delivery.id)).state).toBe("answered");
    await router.idle();
    expect(prompts(fakeLog, text)).toHaveLength(1);
  });

  it("not again by the start's replay when a wake-up routed it while the start read the store", async () => {
    const root = mkdtempSync(join(tmpdir(), "rudder-routed-once-"));
    const fakeLog = join(root, "fake.log");
    const store = new HeldInsertStore(join(root, "gateway.db"));
    const left = await store.insertUserMessage("c1", "left by the last run", "http");
    const pool = fakePool(fakeLog, 300);
    const router = new Router({ store, pool, bus: new EventBus() });
    cleanups.push(async () => {
      await router.close();
      await pool.stopAll();
      await router.idle();
      await store.close();
    });
    const { listed, release } = store.holdListing();
    const starting = router.start();
    // The start has listed what the last run left; a wake-up for it comes meanwhile.
    await listed;
    expect(router.routeStored(left)).toBe("started");
    release();
    await starting;
    expect((await router.settled(left.id)).state).toBe("answered");
    await router.idle();
    expect(prompts(fakeLog, "left by the last run")).toHaveLength(1);
  });

  it("not by a rate-limit retry that fires as close() begins", async () => {
    const { store, router, fakeLog } = await routerOnHeldStore(0, "rate_limit");
    const delivery = await router.deliver("c1", "limited");
    const deferred = await waitFor(async () => {
      const message = await store.getMessage(delivery.id);
      return message?.state === "deferred" ? message : undefined;
    }, "the message deferred by the rate limit");
    const { listed, release } = store.holdListing();
    // The retry timer fires and reads what to retry; the gateway stops meanwhile.
    await listed;
    await router.close();
    release();
    await router.idle();
    // Left as it was, for the next start to retry when the limit resets.
    const after = await store.getMessage(delivery.id);
    expect(after?.state).toBe("deferred");
    expect(after?.deliveries).toBe(deferred.deliveries);
    expect(prompts(fakeLog, "limited")).toHaveLength(1);
  });
});
