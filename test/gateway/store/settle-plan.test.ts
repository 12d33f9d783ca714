/**
 * The settlement's plan. PostgreSQL plans a prepared statement once per connection and may keep
 * that generic plan for good; made while `messages` is nearly empty, a plan that scans the whole
 * table was once kept and cost a worker more with every message stored (3.3 ms of the server's
 * time a message after a few thousand). The settlement of one message must find it by its key
 * in any generic plan, so its cost does not grow with the table.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { STARTED_ONE, STATE_ONE } from "../../../src/gateway/store/postgres/lone-writes.js";
import { settleStatement } from "../../../src/gateway/store/postgres/postgres-settle.js";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";

let cluster: PostgresCluster;
let store: PostgresGatewayStore | undefined;
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterAll(async () => {
  await store?.close();
  await cluster?.destroy();
});

/** The statement `settleStatement` sends for these messages, without sending it. */
async function statementFor(messageIds: string[]): Promise<pg.QueryConfig> {
  let sent: pg.QueryConfig | undefined;
  const recorder = {
    query: async (config: pg.QueryConfig) => {
      sent = config;
      return { rows: [] };
    },
  } as unknown as pg.Pool;
  await settleStatement(recorder, "worker-a", {
    messageIds,
    state: "answered",
    reply: { kind: "reply", text: "done" },
    turn: {
      result: "done",
      costUsd: 0.001,
      usage: { input_tokens: 1 },
      durationMs: 5,
      numTurns: 1,
      isError: false,
      subtype: "success",
      sessionId: "session-1",
    },
    context: { tokens: 1000, window: 200_000 },
  });
  if (sent === undefined) throw new Error("settleStatement sent nothing");
  return sent;
}

it("settles one message by its key in the generic plan made on an empty table", async () => {
  const url = await cluster.createDatabase();
  store = await PostgresGatewayStore.open(url);
  const message = await store.insertUserMessage("c1", "hello", "http");
  const { text, values = [] } = await statementFor([message.id]);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let plan: string;
  try {
    await client.query("SET plan_cache_mode = force_generic_plan");
    await client.query(`PREPARE settle_one AS ${text}`);
    // EXPLAIN takes no parameters: the values are written into it as literals.
    const literal = (value: unknown): string =>
      value === null || value === undefined
        ? "NULL"
        : client.escapeLiteral(value instanceof Date ? value.toISOString() : String(value));
    const { rows } = await client.query<{ "QUERY PLAN": string }>(
      `EXPLAIN EXECUTE settle_one(${values.map(literal).join(", ")})`,
    );
    plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
  } finally {
    await client.end();
  }
  expect(plan).toMatch(/Index Scan using messages_id_key on messages/);
  expect(plan).not.toMatch(/Seq Scan on messages/);

  // And the statement does what it says: the message answered, the reply stored once.
  const reply = await store.settle({
    messageIds: [message.id],
    state: "answered",
    reply: { kind: "reply", text: "done" },
  });
  expect(reply?.replyTo).toBe(message.id);
  expect((await store.getMessage(message.id))?.state).toBe("answered");
  expect(
    await store.settle({
      messageIds: [message.id],
      state: "answered",
      reply: { kind: "reply", text: "again" },
    }),
  ).toBeNull();
});

it("marks and counts one message by its key in the generic plan made on an empty table", async () => {
  const url = await cluster.createDatabase();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const opened = await PostgresGatewayStore.open(url);
  const plans: string[] = [];
  try {
    await client.query("SET plan_cache_mode = force_generic_plan");
    for (const [name, text] of [
      ["started_one", STARTED_ONE],
      ["state_one", STATE_ONE],
    ] as const) {
      await client.query(`PREPARE ${name} AS ${text}`);
      const values = name === "started_one" ? "'id', 'run'" : "'id', 'run', 'received', now()";
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN EXECUTE ${name}(${values})`,
      );
      plans.push(rows.map((row) => row["QUERY PLAN"]).join("\n"));
    }
  } finally {
    await client.end();
  }
  for (const plan of plans) {
    expect(plan).toMatch(/Index Scan using messages_id_key on messages/);
    expect(plan).not.toMatch(/Seq Scan on messages/);
  }
  // And each does what it says, counting once per run.
  const message = await opened.insertUserMessage("c1", "hello", "http");
  await opened.countStarted(message.id, "run-a");
  await opened.countStarted(message.id, "run-a");
  await opened.setMessageState(message.id, "steered", "run-a");
  await opened.setMessageState(message.id, "received", "run-b");
  expect(await opened.getMessage(message.id)).toMatchObject({
    state: "received",
    attempts: 1,
    deliveries: 2,
  });
  await opened.close();
});
