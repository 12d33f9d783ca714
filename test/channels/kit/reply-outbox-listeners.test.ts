/**
 * A chat source's outbox holds one listener on its long-lived signal however many channels send
 * or wait at once: a listener per send made the gateway warn of a leak past ten at once.
 */
import { getEventListeners } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ReplyOutbox } from "../../../src/channels/kit/reply-outbox.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";
import { FakeChatPlatform } from "../../helpers/fake-chat-platform.js";
import { waitFor } from "../../helpers/wait-for.js";

const CHANNELS = 15;

it("fifteen channels sending at once hold one listener on the outbox's signal", async () => {
  const folder = mkdtempSync(join(tmpdir(), "rudder-outbox-listeners-"));
  const store = new SqliteGatewayStore(join(folder, "gateway.db"));
  const stopping = new AbortController();
  const platform = new FakeChatPlatform();
  platform.sendsHang = true;
  try {
    const outbox = new ReplyOutbox({
      platform,
      ledger: store.sourceStore().outbound,
      worker: "w",
      signal: stopping.signal,
      backoff: { initialMs: 1000, maxMs: 1000 },
      log: () => {},
      onBadToken: () => {},
    });
    for (let index = 0; index < CHANNELS; index += 1) {
      await outbox.send(`fake:${index}`, "answer", { text: `reply ${index}`, format: "plain" });
    }
    await waitFor(() => platform.attempted.length === CHANNELS, "every channel's send under way");
    expect(getEventListeners(stopping.signal, "abort").length).toBeLessThanOrEqual(1);
    stopping.abort();
    platform.thaw();
    await outbox.idle();
  } finally {
    platform.thaw();
    store.close();
    rmSync(folder, { recursive: true, force: true });
  }
});
