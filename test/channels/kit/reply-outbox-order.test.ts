/**
 * A channel's entries leave the outbox in the order they were given, on a real store with its
 * writes held at the exact point that decides: two answers recorded at once (the later write
 * finishing first), and a rescan passing while an earlier pass's entries still wait behind an
 * entry another worker holds.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ReplyOutbox } from "../../../src/channels/kit/reply-outbox.js";
import type { OutboundLedger } from "../../../src/gateway/store/source-store.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";
import { FakeChatPlatform } from "../../helpers/fake-chat-platform.js";
import { waitFor } from "../../helpers/wait-for.js";

const CHANNEL = "fake:7";

let folder: string;
let store: SqliteGatewayStore;
let stopping: AbortController;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), "rudder-outbox-order-"));
  store = new SqliteGatewayStore(join(folder, "gateway.db"));
  stopping = new AbortController();
});

afterEach(() => {
  stopping.abort();
  store.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A promise and the function that settles it: the point a held write waits at. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

function outbox(platform: FakeChatPlatform, ledger: OutboundLedger) {
  return new ReplyOutbox({
    platform,
    ledger,
    worker: "worker-b",
    signal: stopping.signal,
    backoff: { initialMs: 1000, maxMs: 1000 },
    log: () => {},
    onBadToken: () => {},
  });
}

it("sends two answers recorded at once in the order given, the first write finishing last", async () => {
  const inner = store.sourceStore().outbound;
  const held = gate();
  let writes = 0;
  const ledger: OutboundLedger = {
    ...inner,
    recordAll: async (entries) => {
      writes += 1;
      if (writes === 1) await held.opened;
      return inner.recordAll(entries);
    },
  };
  const platform = new FakeChatPlatform();
  const sender = outbox(platform, ledger);
  const first = sender.send(CHANNEL, "answer", { text: "first answer", format: "plain" });
  const second = sender.send(CHANNEL, "answer", { text: "second answer", format: "plain" });
  // Whatever the second call writes meanwhile, the first write has not finished.
  await new Promise((resolve) => setImmediate(resolve));
  held.open();
  await Promise.all([first, second]);
  await sender.idle();
  expect(platform.sent.map((sent) => sent.message.text)).toEqual(["first answer", "second answer"]);
});

it("keeps a later entry behind one another worker holds while a rescan passes", async () => {
  const inner = store.sourceStore().outbound;
  const [held, second] = await inner.recordAll(
    ["first answer", "second answer"].map((text) => ({
      source: "fake",
      channelId: CHANNEL,
      kind: "answer" as const,
      action: "send" as const,
      body: JSON.stringify({ text, format: "plain" }),
    })),
  );
  // Worker A is sending the first now, its claim live.
  expect(await inner.claim(held!.id, "worker-a", 60_000)).not.toBeNull();
  // The second entry's first read waits until the next rescan has read the ledger.
  const rescanRead = gate();
  let secondReads = 0;
  const ledger: OutboundLedger = {
    ...inner,
    get: async (id) => {
      if (id === second!.id) {
        secondReads += 1;
        if (secondReads === 1) await rescanRead.opened;
      }
      return inner.get(id);
    },
  };
  const platform = new FakeChatPlatform();
  const sender = outbox(platform, ledger);
  await sender.resume();
  await waitFor(() => secondReads === 1, "the second entry's turn in the first pass");
  await sender.resume();
  rescanRead.open();
  await sender.idle();
  expect(platform.attempted).toEqual([]);
  // Worker A's send done, the next rescan sends the second.
  await inner.sent(held!.id, "a-1");
  await sender.resume();
  await sender.idle();
  expect(platform.sent.map((sent) => sent.message.text)).toEqual(["second answer"]);
});
