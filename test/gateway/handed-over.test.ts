import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RegistryProcessPool } from "../../src/gateway/agents/process-pool.js";
import { EventBus } from "../../src/gateway/event-bus.js";
import type { MessageState } from "../../src/gateway/events.js";
import { SqliteGatewayStore } from "../../src/gateway/store/sqlite/sqlite-store.js";
import type { MessageRecord } from "../../src/gateway/store/store.js";
import { FAKE_CLAUDE } from "../helpers/fixtures.js";
import { startInProcessRouter } from "../helpers/in-process-router.js";

/** A real SQLite store that notes which inserts were handed over and every state write. */
class NotingStore extends SqliteGatewayStore {
  readonly handedTo = new Map<string, string | undefined>();
  readonly states: Array<{ text: string; state: MessageState; run: string | undefined }> = [];
  readonly #texts = new Map<string, string>();

  override async insertUserMessage(
    channelId: string,
    text: string,
    source: string,
    handedTo?: string,
  ): Promise<MessageRecord> {
    const message = await super.insertUserMessage(channelId, text, source, handedTo);
    this.handedTo.set(text, handedTo);
    this.#texts.set(message.id, text);
    return message;
  }

  override async setMessageState(id: string, state: MessageState, run?: string): Promise<void> {
    this.states.push({ text: this.#texts.get(id) ?? id, state, run });
    await super.setMessageState(id, state, run);
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function router(replyDelayMs: number) {
  const root = mkdtempSync(join(tmpdir(), "rudder-handed-over-"));
  const store = new NotingStore(join(root, "gateway.db"));
  const pool = new RegistryProcessPool({
    maxLive: 2,
    idleMinutes: 1,
    processOptions: {
      claudeBin: FAKE_CLAUDE,
      env: { FAKE_CLAUDE_REPLY_DELAY_MS: String(replyDelayMs), FAKE_CLAUDE_SCENARIO: "normal" },
    },
    logger: () => {},
  });
  const { router, close } = await startInProcessRouter({ store, pool, bus: new EventBus() }, root);
  cleanups.push(close);
  return { store, router };
}

describe("a message that starts a turn is counted as handed over in its insert", () => {
  it("on an idle channel: one write before the agent reads it, its delivery counted once", async () => {
    const { store, router: gateway } = await router(0);
    const started = await gateway.deliver("idle", "hello");
    expect(started.disposition).toBe("started");
    expect(store.handedTo.get("hello")).toEqual(expect.any(String));
    const settled = await gateway.settled(started.id);
    expect(settled.state).toBe("answered");
    // No second write counted the handover: only the answer moved its state.
    expect(store.states.filter((write) => write.text === "hello")).toEqual([]);
    expect(await store.getMessage(started.id)).toMatchObject({ state: "answered", deliveries: 1 });
  });

  it("not a steer, a command, or the second of two stored at once", async () => {
    const { store, router: gateway } = await router(400);
    // Two at once on an idle channel: the first starts the turn, the second steers it.
    const [first, second] = await Promise.all([
      gateway.deliver("busy", "first"),
      gateway.deliver("busy", "second"),
    ]);
    expect([first.disposition, second.disposition]).toEqual(["started", "steered"]);
    const third = await gateway.deliver("busy", "third");
    expect(third.disposition).toBe("steered");
    const command = await gateway.deliver("other", "/clear");
    expect(command.disposition).toBe("command");
    expect(store.handedTo.get("first")).toEqual(expect.any(String));
    for (const text of ["second", "third", "/clear"])
      expect(store.handedTo.get(text)).toBe(undefined);
    for (const { id } of [first, second, third]) {
      expect((await gateway.settled(id)).state).toBe("answered");
      expect((await store.getMessage(id))?.deliveries).toBe(1);
    }
    // The steers are counted as they are handed over (once the turn's agent has started), by
    // the same run as the insert counted.
    const run = store.handedTo.get("first");
    expect(
      store.states.filter((write) => write.text !== "/clear" && write.run !== undefined),
    ).toEqual([
      { text: "second", state: "steered", run },
      { text: "third", state: "steered", run },
    ]);
  });
});
