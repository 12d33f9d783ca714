/**
 * The PostgreSQL store's batched writes of single messages (message-writes.ts, with the event
 * appends they share a statement with, write-batch.ts), against a real
 * server: what is asked in one turn of the event loop goes in one statement, in order, and the
 * records given back are what is stored; one bad item fails only its caller; the marks and
 * counts find each message by its key whatever plan the connection keeps.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { GatewayEvent } from "../../../src/gateway/events.js";
import { EventLog } from "../../../src/gateway/store/postgres/event-log.js";
import { MessageWrites } from "../../../src/gateway/store/postgres/message-writes.js";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { WriteBatch } from "../../../src/gateway/store/postgres/write-batch.js";
import type { SharedEvent } from "../../../src/gateway/store/shared-store.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";

let cluster: PostgresCluster;
const closing: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});
afterAll(async () => {
  await cluster?.destroy();
});

/** A worker's `MessageWrites` on a pool of its own whose statements are counted (`sent`). */
function countedWrites(url: string, poolOptions: pg.PoolConfig = {}) {
  const pool = new pg.Pool({ connectionString: url, ...poolOptions });
  // A connection still closing when the server stops after the file is not a failure here.
  pool.on("error", () => {});
  closing.push(() => pool.end());
  const sent: string[] = [];
  const query = pool.query.bind(pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
  pool.query = ((config: pg.QueryConfig) => {
    sent.push(config.text);
    return query(config);
  }) as typeof pool.query;
  return { pool, sent, writes: new MessageWrites(new WriteBatch(pool)) };
}

/** A migrated database, its store, and counted `MessageWrites` on it. */
async function fixture(poolOptions: pg.PoolConfig = {}) {
  const url = await cluster.createDatabase();
  const store = await PostgresGatewayStore.open(url);
  closing.push(() => store.close());
  return { url, store, ...countedWrites(url, poolOptions) };
}

it("stores the messages asked in one turn in one statement, in order, as the records given back", async () => {
  const { store, sent, writes } = await fixture();
  const asked = Array.from({ length: 30 }, (_, index) =>
    writes.insert(`c${index % 3}`, "user", "user", `message ${index}`, "received", "http"),
  );
  const records = await Promise.all(asked);
  expect(sent).toHaveLength(1);
  for (const record of records) {
    expect(await store.getMessage(record.id)).toEqual(record);
  }
  for (const channel of ["c0", "c1", "c2"]) {
    const texts = (await store.listMessages(channel)).map((message) => message.text);
    const expected = records.filter((record) => record.channelId === channel).map((r) => r.text);
    expect(texts).toEqual(expected);
    expect(texts).toHaveLength(10);
  }
  expect((await store.listChannels()).map((channel) => channel.id).sort()).toEqual([
    "c0",
    "c1",
    "c2",
  ]);
});

it("sends what is asked while a statement runs in the next one", async () => {
  const { sent, writes } = await fixture();
  const first = writes.insert("c1", "user", "user", "first", "received", "http");
  // Asked once the first statement is on its way (after the turn it was asked in).
  await new Promise((resolve) => setImmediate(resolve));
  const later = Array.from({ length: 5 }, (_, index) =>
    writes.insert("c1", "user", "user", `later ${index}`, "received", "http"),
  );
  await Promise.all([first, ...later]);
  expect(sent).toHaveLength(2);
});

it("applies marks and started counts of one turn in one statement, in the order asked", async () => {
  const { store, sent, writes } = await fixture();
  const one = await store.insertUserMessage("c1", "one", "http");
  const two = await store.insertUserMessage("c2", "two", "http");
  const before = sent.length;
  await Promise.all([
    writes.setState(one.id, "received", "run-a"),
    writes.countStarted(one.id, "run-a"),
    // The same run again counts nothing more; another run counts once more.
    writes.setState(one.id, "steered", "run-a"),
    writes.countStarted(one.id, "run-a"),
    writes.setState(two.id, "received", "run-a"),
    writes.setState(two.id, "received", "run-b"),
    writes.countStarted(two.id, "run-b"),
  ]);
  expect(sent.length - before).toBe(1);
  expect(await store.getMessage(one.id)).toMatchObject({
    state: "steered",
    deliveries: 1,
    attempts: 1,
  });
  expect(await store.getMessage(two.id)).toMatchObject({
    state: "received",
    deliveries: 2,
    attempts: 1,
  });
  // An answered message is left as it is.
  await store.settle({
    messageIds: [two.id],
    state: "answered",
    reply: { kind: "reply", text: "done" },
  });
  await Promise.all([
    writes.setState(two.id, "failed", "run-c"),
    writes.countStarted(two.id, "run-c"),
  ]);
  expect(await store.getMessage(two.id)).toMatchObject({
    state: "answered",
    deliveries: 2,
    attempts: 1,
  });
});

it("fails only the caller whose message the database refuses; the others are stored", async () => {
  const { store, sent, writes } = await fixture();
  const results = await Promise.allSettled([
    writes.insert("c1", "user", "user", "before", "received", "http"),
    // PostgreSQL's text cannot hold a NUL character.
    writes.insert("c1", "user", "user", "bad \u0000 text", "received", "http"),
    writes.insert("c2", "user", "user", "after", "received", "http"),
  ]);
  expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  const refused = results[1] as PromiseRejectedResult;
  expect(String(refused.reason)).toMatch(/unicode|\\u0000/i);
  // The batch, then each alone.
  expect(sent).toHaveLength(4);
  expect((await store.listMessages("c1")).map((message) => message.text)).toEqual(["before"]);
  expect((await store.listMessages("c2")).map((message) => message.text)).toEqual(["after"]);
});

it("finds each message by its key in the plan a connection keeps, however the table grew", async () => {
  // One connection, planning generically from the first call (as it may after five): a plan
  // that joined the batch with a scan of `messages` would show as sequential scans.
  const { store, pool, writes } = await fixture({
    max: 1,
    options: "-c plan_cache_mode=force_generic_plan",
  });
  const first = await store.insertUserMessage("c1", "first", "http");
  await writes.setState(first.id, "received", "run-a");
  for (let round = 0; round < 20; round += 1) {
    await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        store.insertUserMessage(`c${index % 5}`, `filler ${round} ${index}`, "http"),
      ),
    );
  }
  const ids = (await store.listMessages("c2", 20)).map((message) => message.id);
  const scans = async () => {
    await pool.query("SELECT pg_stat_force_next_flush()");
    // The flush happens as the connection goes idle; the next statement reads it.
    const { rows } = await pool.query<{ seq_scan: string; idx_scan: string }>(
      "SELECT seq_scan, idx_scan FROM pg_stat_user_tables WHERE relname = 'messages'",
    );
    return { seq: Number(rows[0]!.seq_scan), index: Number(rows[0]!.idx_scan) };
  };
  await scans();
  const before = await scans();
  await Promise.all(
    ids.flatMap((id) => [
      writes.setState(id, "received", "run-b"),
      writes.countStarted(id, "run-b"),
    ]),
  );
  const after = await scans();
  expect(after.seq - before.seq).toBe(0);
  expect(after.index - before.index).toBeGreaterThanOrEqual(ids.length * 2);
  expect(await store.getMessage(ids[0]!)).toMatchObject({ deliveries: 1, attempts: 1 });
});

it("lets two workers' batches over the same channels, in any order, go through without a deadlock", async () => {
  const first = await fixture();
  // A second worker: its own pool on the same database.
  const { sent, writes: second } = countedWrites(first.url);
  const channels = Array.from({ length: 12 }, (_, index) => `c${index}`);
  const rounds = 40;
  let expected = 0;
  for (let round = 0; round < rounds; round += 1) {
    // Each batch makes or touches its channels' rows, the two over different sets of the same
    // channels (so the database may meet them in different orders).
    const others = channels.filter((_, index) => (index * 7 + round) % 3 !== 0);
    expected += channels.length + others.length;
    await Promise.all([
      ...channels.map((channel) =>
        first.writes.insert(channel, "user", "user", `a${round}`, "received", "http"),
      ),
      ...others.map((channel) =>
        second.insert(channel, "user", "user", `b${round}`, "received", "http"),
      ),
    ]);
  }
  // A deadlock would have failed a batch, sent again item by item: more statements than rounds.
  expect(first.sent).toHaveLength(rounds);
  expect(sent).toHaveLength(rounds);
  let stored = 0;
  for (const channel of channels) stored += (await first.store.listMessages(channel, 1000)).length;
  expect(stored).toBe(expected);
}, 60_000);

it("sends the moment's new messages, marks and event appends in one statement, the events' ids in order and announced", async () => {
  const { store, pool, sent } = await fixture();
  const batch = new WriteBatch(pool);
  const writes = new MessageWrites(batch);
  const events = new EventLog(pool, batch);
  const heard: SharedEvent[] = [];
  const feed = await store.listenForEvents(
    (event) => heard.push(event),
    () => {},
  );
  closing.push(() => feed.close());
  const earlier = await store.insertUserMessage("c1", "earlier", "http");
  const state = (messageId: string, channelId: string): GatewayEvent => ({
    type: "message_state",
    messageId,
    state: "answered",
    channelId,
  });
  const before = sent.length;
  const [record, , firstIds, secondIds] = await Promise.all([
    writes.insert("c2", "user", "user", "new", "received", "http"),
    writes.setState(earlier.id, "steered", "run-a"),
    events.append([state("m1", "c1"), state("m2", "c2")]),
    events.append([state("m3", "c1")]),
  ]);
  expect(sent.length - before).toBe(1);
  expect(await store.getMessage(record.id)).toEqual(record);
  expect(await store.getMessage(earlier.id)).toMatchObject({ state: "steered", deliveries: 1 });
  expect(firstIds).toHaveLength(2);
  expect(secondIds).toHaveLength(1);
  const ids = [...firstIds, ...secondIds];
  expect([...ids].sort((left, right) => left - right)).toEqual(ids);
  const stored = await store.eventsSince(0, 10);
  expect(stored.map(({ id, event }) => [id, (event as { messageId: string }).messageId])).toEqual([
    [ids[0], "m1"],
    [ids[1], "m2"],
    [ids[2], "m3"],
  ]);
  await expect.poll(() => heard.map((event) => event.id)).toEqual(ids);

  // Events too large for one NOTIFY go in a statement of their own, announced one by one (a
  // large one by its id, read back), beside the rest of the moment's writes.
  const large = { ...state("m4", "c1"), padding: "x".repeat(9000) } as unknown as GatewayEvent;
  const sentBefore = sent.length;
  const [, largeIds] = await Promise.all([
    writes.insert("c1", "user", "user", "beside", "received", "http"),
    events.append([large, state("m5", "c2")]),
  ]);
  expect(sent.length - sentBefore).toBe(2);
  expect(largeIds).toHaveLength(2);
  expect(largeIds[0]!).toBeGreaterThan(ids[2]!);
  await expect.poll(() => heard.map((event) => event.id)).toEqual([...ids, ...largeIds]);
  expect((heard.at(-2)?.event as { padding?: string } | undefined)?.padding).toHaveLength(9000);
  expect((await store.listMessages("c1")).map((message) => message.text)).toEqual([
    "earlier",
    "beside",
  ]);
});
