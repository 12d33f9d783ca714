/**
 * The chat kit on PostgreSQL with two workers (one throwaway cluster for the file): a source
 * whose platform is `exclusive` receives on one worker only, and the other takes over within
 * two lease periods once the first is stopped or dies; a message's delivery key is claimed
 * once across workers, and a dead worker's unfinished claim is taken again; the replies a
 * worker recorded in the ledger and died before sending are sent once by the other. Discord on
 * the fake Discord: one worker holds the gateway connection; when it dies the other connects.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { DiscordChannelSource } from "../../../src/channels/discord/discord-source.js";
import { ChatSource } from "../../../src/channels/kit/chat-source.js";
import { PermissionRequests } from "../../../src/gateway/agents/permission-requests.js";
import { ChannelOwnership } from "../../../src/gateway/cluster/channel-ownership.js";
import { EventBus } from "../../../src/gateway/event-bus.js";
import type { GatewayEvent } from "../../../src/gateway/events.js";
import type { Router } from "../../../src/gateway/routing/router.js";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { busSourceContext } from "../../helpers/bus-source-context.js";
import { FakeChatPlatform } from "../../helpers/fake-chat-platform.js";
import { startFakeDiscord } from "../../helpers/fake-discord.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";
import { waitFor } from "../../helpers/wait-for.js";

const LEASE_SECONDS = 1;
const ADA = "411111111111111111";

let cluster: PostgresCluster;
/** One database for the file: each test's source has a name (and so a lease) of its own. */
let url: string;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  cluster = await startPostgresCluster();
  url = await cluster.createDatabase();
});

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  await cluster?.destroy();
});

/**
 * The routing a worker's ownership calls for channels: no channel has messages here, so none
 * is ever routed; the ownership's part under test is the source's lease.
 */
const idleRouter = {
  inflight: () => false,
  forget: () => {},
  abandon: () => false,
  useSession: () => {},
  routeStored: () => {},
} as unknown as Router;

/** One worker: its store, its channel ownership and a chat source on an exclusive platform. */
interface WorkerOptions {
  /** How often the ledger is read again for a dead worker's entries. */
  rescanMs?: number;
  sendTimeoutMs?: number;
}

function startWorker(name: string, sourceName: string, options: WorkerOptions = {}) {
  return startWorkerWith(name, sourceName, (log) => {
    const platform = new FakeChatPlatform(sourceName, { exclusive: true });
    const source = new ChatSource({ platform, allow: ["7"], logger: log, ...options });
    return { platform, source, thaw: () => platform.thaw() };
  });
}

/** A worker whose chat source `make` builds (its platform's hung sends let go by `thaw`). */
async function startWorkerWith<P>(
  name: string,
  sourceName: string,
  make: (log: (line: string) => void) => { platform: P; source: ChatSource; thaw?: () => void },
) {
  const store = await PostgresGatewayStore.open(url);
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  const ownership = new ChannelOwnership({
    store,
    router: idleRouter,
    worker: name,
    leaseSeconds: LEASE_SECONDS,
    stopChannel: async () => {},
    logger: log,
  });
  const bus = new EventBus();
  const permissions = new PermissionRequests({ bus });
  const { platform, source, thaw } = make(log);
  const closing = new AbortController();
  const delivered: string[] = [];
  await source.start(
    async (channelId, text) => {
      const message = await store.insertUserMessage(channelId, text, sourceName);
      delivered.push(text);
      return { id: message.id, disposition: "started" };
    },
    busSourceContext(bus, {
      permissions,
      signal: closing.signal,
      store: store.sourceStore(),
      worker: name,
      exclusive: ownership.receiveExclusive,
    }),
  );
  await ownership.start();
  const worker = {
    name,
    store,
    bus,
    source,
    ownership,
    platform,
    delivered,
    logs,
    /** A clean shutdown: receiving stops and the leases are released. */
    stop: async () => {
      closing.abort();
      thaw?.();
      await source.stop();
      await ownership.stop();
      permissions.close();
      await store.close();
    },
  };
  cleanups.push(worker.stop);
  return worker;
}

async function twoWorkers(sourceName: string) {
  const a = await startWorker("worker-a", sourceName);
  const b = await startWorker("worker-b", sourceName);
  return [a, b] as const;
}

describe("an exclusive chat source on two PostgreSQL workers", () => {
  it("receives on one worker only; the other takes over at once after a clean stop", async () => {
    const workers = await twoWorkers("clean");
    const receiver = await waitFor(
      () => workers.find((worker) => worker.platform.receiving),
      "a worker receiving",
    );
    const other = workers.find((worker) => worker !== receiver)!;
    // A whole renewal and sweep of the other worker, after which it still only waits.
    await other.ownership.revalidate();
    expect(other.platform.receives).toBe(0);
    expect(other.logs).toContain(
      "clean: another worker receives (lease source:clean); this one waits",
    );
    const stopped = Date.now();
    await receiver.stop();
    await waitFor(() => other.platform.receiving, "the other worker receiving");
    expect(Date.now() - stopped).toBeLessThan(LEASE_SECONDS * 1000);
    expect(other.platform.receives).toBe(1);
  });

  it("takes over within two lease periods when the receiving worker dies", async () => {
    const workers = await twoWorkers("killed");
    const receiver = await waitFor(
      () => workers.find((worker) => worker.platform.receiving),
      "a worker receiving",
    );
    const other = workers.find((worker) => worker !== receiver)!;
    // Dead to the cluster: its connections gone, its leases neither renewed nor released.
    const died = Date.now();
    await receiver.store.close();
    await waitFor(() => other.platform.receiving, "the other worker receiving", 4_000);
    expect(Date.now() - died).toBeLessThan(2 * LEASE_SECONDS * 1000);
  });

  it("hands a message read by both workers to one of them", async () => {
    const a = await PostgresGatewayStore.open(url);
    const b = await PostgresGatewayStore.open(url);
    cleanups.push(
      () => a.close(),
      () => b.close(),
    );
    const database = new pg.Client(url);
    await database.connect();
    cleanups.push(() => database.end());
    const ageClaims = () =>
      database.query("UPDATE inbound_deliveries SET created_at = now() - interval '10 minutes'");
    const deliveriesA = a.sourceStore().deliveries;
    const deliveriesB = b.sourceStore().deliveries;
    const won = await Promise.all([
      deliveriesA.claim("fake", "7:1"),
      deliveriesB.claim("fake", "7:1"),
    ]);
    expect(won.filter(Boolean)).toHaveLength(1);
    // A claim whose worker died before finishing it is taken again once it is stale.
    await ageClaims();
    expect(await deliveriesB.claim("fake", "7:1")).toBe(true);
    await deliveriesB.finish("fake", "7:1");
    await ageClaims();
    expect(await deliveriesA.claim("fake", "7:1")).toBe(false);
  });
});

describe("Discord on two PostgreSQL workers", () => {
  it("connects one worker to the gateway; when it dies the other connects and answers", async () => {
    // Loaded first: loading it blocks a worker's event loop longer than a 1 s lease allows.
    await import("discord.js");
    const discord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    const discordWorker = (name: string) =>
      startWorkerWith(name, "discord", (log) => {
        const source = new DiscordChannelSource({
          token: discord.token,
          apiUrl: discord.apiUrl,
          allow: [ADA],
          backoff: { initialMs: 20, maxMs: 200 },
          logger: log,
        });
        return { platform: source.platform, source };
      });
    const workers = [await discordWorker("worker-a"), await discordWorker("worker-b")];
    // A wait that fails (the DM never delivered, seen once under load) shows what each said.
    onTestFailed(() => {
      for (const worker of workers) {
        console.error(`${worker.name}'s log:\n${worker.logs.join("\n")}`);
        console.error(`${worker.name} delivered: ${JSON.stringify(worker.delivered)}`);
      }
    });
    const holder = await waitFor(
      () => workers.find((worker) => worker.platform.client !== undefined),
      "a worker connected to Discord",
    );
    const other = workers.find((worker) => worker !== holder)!;
    await other.ownership.revalidate();
    expect(other.platform.client).toBeUndefined();
    const identified = discord.gateway.identifies;
    // Dead to the cluster: its leases neither renewed nor released.
    const died = Date.now();
    await holder.store.close();
    await waitFor(() => other.platform.client?.isReady(), "the other worker connected", 4_000);
    expect(Date.now() - died).toBeLessThan(2 * LEASE_SECONDS * 1000 + 2000);
    expect(discord.gateway.identifies).toBeGreaterThan(identified);
    const dm = discord.dm(ADA);
    discord.say({ userId: ADA, channelId: dm, text: "who answers now?" });
    await waitFor(
      () => other.delivered.includes("who answers now?"),
      "the other worker delivering",
    );
    expect(holder.delivered).toEqual([]);
  });
});

/** A reply of the agent on `channelId`, as the gateway publishes it to the channel's sources. */
function reply(channelId: string, id: string, text: string): GatewayEvent {
  return {
    type: "reply",
    channelId,
    message: {
      id,
      channelId,
      role: "assistant",
      kind: "reply",
      text,
      state: null,
      replyTo: null,
      createdAt: new Date().toISOString(),
    },
  } as GatewayEvent;
}

describe("the reply ledger on two PostgreSQL workers", () => {
  it("sends once, through the other worker, what a worker recorded and died before sending", async () => {
    const options = { rescanMs: 200, sendTimeoutMs: 400 };
    const a = await startWorker("worker-a", "ledger", options);
    const channelId = "ledger:7";
    // Worker A takes the chat's message (so it watches the channel), then freezes mid-send.
    await a.platform.push(a.platform.incoming("7", "hello"));
    a.platform.sendsHang = true;
    a.bus.publish(reply(channelId, "reply-1", "first answer"));
    a.bus.publish(reply(channelId, "reply-2", "second answer"));
    await waitFor(() => a.platform.attempted.length === 1, "worker A trying the first send");
    await waitFor(
      async () => (await a.store.sourceStore().outbound.unsent("ledger")).length === 2,
      "both answers recorded",
    );
    // Worker B starts only now: started earlier, its rescan may take the first answer before
    // worker A claims it (as any worker may), and this case is about the one A holds.
    const b = await startWorker("worker-b", "ledger", options);
    const ledger = b.store.sourceStore().outbound;
    // Dead: its connections gone, its claim on the first answer left to run out.
    await a.store.close();
    await waitFor(() => b.platform.sent.length === 2, "worker B sending both answers", 10_000);
    expect(b.platform.sent.map((sent) => sent.message.text)).toEqual([
      "first answer",
      "second answer",
    ]);
    // Each is marked sent in a write after the platform took it.
    await waitFor(
      async () => (await ledger.unsent("ledger")).length === 0,
      "both answers marked sent",
    );
    // The first may have left worker A before it froze: sent again, marked so; the second not.
    expect(b.source.recovered).toBe(1);
    expect(b.logs).toContain("ledger: sending a answer to ledger:7 again (recovered, may repeat)");
    expect(a.platform.sent).toEqual([]);
  });
});
