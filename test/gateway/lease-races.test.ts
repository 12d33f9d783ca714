/**
 * A worker's leases against its own renewals and deliveries, on a real PostgreSQL, with the
 * store paused at the exact points where a message could be left for nobody: a channel claimed
 * while a renewal is on its way (the renewal's answer, taken before the claim, does not list
 * it), a channel lost between its claim and the routing of its message, and a message stored
 * for a held channel whose wake-up never came. Each message must be routed by some worker.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresGatewayStore } from "../../src/gateway/store/postgres/postgres-store.js";
import type { WorkerLeases } from "../../src/gateway/store/shared-store.js";
import type { MessageRecord } from "../../src/gateway/store/store.js";
import { startInProcessWorker } from "../helpers/in-process-worker.js";
import { postgresForFile } from "../helpers/postgres-for-file.js";
import { waitFor } from "../helpers/wait-for.js";

const postgres = postgresForFile();
const { cleanups } = postgres;

/** The next call of a store method, held once it has run (its answer kept) until released. */
class Gates {
  readonly #armed = new Map<string, { reached: () => void; released: Promise<void> }>();

  hold(method: string): { reached: Promise<void>; release: () => void } {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reached = new Promise<void>((resolve) => {
      this.#armed.set(method, { reached: resolve, released });
    });
    return { reached, release };
  }

  async pass(method: string): Promise<void> {
    const gate = this.#armed.get(method);
    if (gate === undefined) return;
    this.#armed.delete(method);
    gate.reached();
    await gate.released;
  }
}

function gatedLeases(leases: WorkerLeases, gates: Gates): WorkerLeases {
  return {
    worker: leases.worker,
    seconds: leases.seconds,
    claim: (channelId) => leases.claim(channelId),
    claimOrphans: async () => {
      await gates.pass("claimOrphans");
      return leases.claimOrphans();
    },
    renew: async () => {
      const renewed = await leases.renew();
      await gates.pass("renew");
      return renewed;
    },
    holder: (channelId) => leases.holder(channelId),
    release: (channelId) => leases.release(channelId),
    releaseAll: () => leases.releaseAll(),
  };
}

/** The real store, with its leases' renewals and sweeps and its `listDeferred` held on cue. */
function gatedStore(store: PostgresGatewayStore, gates: Gates): PostgresGatewayStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === "channelLeases") {
        return (worker: string, seconds: number) =>
          gatedLeases(target.channelLeases(worker, seconds), gates);
      }
      if (property === "listDeferred") {
        return async (): Promise<MessageRecord[]> => {
          const deferred = await target.listDeferred();
          await gates.pass("listDeferred");
          return deferred;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** What `startGateway` assembles for a worker on a shared store, without its HTTP server. */
async function worker(url: string, name: string, leaseSeconds: number) {
  const store = await PostgresGatewayStore.open(url);
  const gates = new Gates();
  const lines: string[] = [];
  const { router, ownership, close } = await startInProcessWorker({
    store: gatedStore(store, gates),
    closes: store,
    worker: name,
    leaseSeconds,
    logger: (line) => lines.push(line),
  });
  cleanups.push(close);
  const message = (id: string) => store.getMessage(id);
  return { router, ownership, gates, lines, store, message };
}

describe("a worker's leases", () => {
  it("keeps a channel it claimed while a renewal was on its way, and routes its first message", async () => {
    // Leases long enough that no renewal comes but the ones the test asks for.
    const a = await worker(await postgres.cluster.createDatabase(), "a", 60);
    // A renewal's answer, read from the database before the claim below was made.
    const renewal = a.gates.hold("renew");
    void a.ownership.revalidate();
    await renewal.reached;
    // The claim is answered and the channel held; the delivery is still reading what the
    // channel left unanswered (nothing, it is new) when the renewal's answer comes in.
    const listing = a.gates.hold("listDeferred");
    const delivery = a.ownership.deliver("fresh", "first words", "http");
    await listing.reached;
    const swept = a.gates.hold("claimOrphans");
    renewal.release();
    await swept.reached;
    swept.release();
    listing.release();
    const { disposition } = await delivery;
    expect(disposition).toBe("started");
    expect(a.ownership.holds("fresh")).toBe(true);
    expect(a.lines.filter((line) => line.includes("lost the lease"))).toEqual([]);
  }, 60_000);

  it("wakes the channel's new owner for a message stored after its lease was lost", async () => {
    const url = await postgres.cluster.createDatabase();
    const a = await worker(url, "a", 60);
    const b = await PostgresGatewayStore.open(url);
    cleanups.push(() => b.close());
    const wakes: string[] = [];
    const listening = await b.listenForWakeUps(
      "b",
      (id) => wakes.push(id),
      () => {},
    );
    cleanups.push(() => listening.close());
    const listing = a.gates.hold("listDeferred");
    const delivery = a.ownership.deliver("moved", "said as the channel moved", "http");
    await listing.reached;
    // Claimed by a; then b holds the channel (a stalled past its lease, say) and has listed
    // its messages already, before this one was stored.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    cleanups.push(() => client.end());
    await client.query(
      "UPDATE leases SET owner = 'b', expires_at = now() + interval '1 minute' WHERE channel_id = 'moved'",
    );
    await a.ownership.revalidate();
    expect(a.ownership.holds("moved")).toBe(false);
    listing.release();
    const { id, disposition } = await delivery;
    expect(disposition).toBe("forwarded");
    await waitFor(() => wakes.includes(id), "b woken for the message");
  }, 60_000);

  it("routes a message of a held channel whose wake-up never came, and says so", async () => {
    const url = await postgres.cluster.createDatabase();
    // Leases of a second: it looks for missed messages every second.
    const a = await worker(url, "a", 1);
    expect(await a.ownership.claim("quiet")).toBe(true);
    // Stored through another worker whose wake-up was lost on the way.
    const other = await PostgresGatewayStore.open(url);
    cleanups.push(() => other.close());
    const stranded = await other.insertUserMessage("quiet", "second", "http");
    // Handed to an agent: counted as delivered by a's run.
    await waitFor(
      async () => ((await a.message(stranded.id))?.deliveries ?? 0) > 0,
      "the stranded message routed",
    );
    expect(a.lines.filter((line) => line.includes(stranded.id))).toEqual([
      expect.stringContaining("never routed here"),
    ]);
  }, 60_000);
});
