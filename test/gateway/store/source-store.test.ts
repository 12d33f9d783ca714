/**
 * The chat sources' tables on both store adapters: the reply ledger (recorded, claimed, sent,
 * retried, given up with a line; a claim left by a dead gateway taken again as "may repeat";
 * an edit waiting merged with the next; stored replies no entry carries found, a conversation's
 * first answer too), pairing codes
 * (one per person, a few waiting at most, approved once) and grants.
 */

import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { SqliteGatewayStore } from "../../../src/gateway/store/sqlite/sqlite-store.js";
import { storeAdapters } from "./store-adapters.js";

const { adapters, databasePath, postgres } = storeAdapters();

const answer = (origin?: string) => ({
  source: "telegram",
  channelId: "telegram:1",
  kind: "answer" as const,
  action: "send" as const,
  body: '{"text":"hi","format":"plain"}',
  ...(origin === undefined ? {} : { origin }),
});

describe.each(adapters)("the $name store's chat source tables", (adapter) => {
  it("records, claims once, marks sent, and knows a reply it carries", async () => {
    const store = await adapter.open();
    try {
      const { outbound } = store.sourceStore();
      // A conversation's first answer, stored before the channel has any entry, is known too;
      // a channel the chat never wrote in (the page's) has nothing that is the chat's to send.
      const dm = "discord:dm:5:5";
      await store.insertUserMessage(dm, "hello", "discord:7:Ada");
      const first = await store.insertAgentMessage(dm, "echo: hello", "reply");
      expect((await outbound.unrecorded(dm, 10)).map((message) => message.id)).toEqual([first.id]);
      await store.insertUserMessage("discord:dm:6:6", "from the page", "http");
      await store.insertAgentMessage("discord:dm:6:6", "echo: from the page", "reply");
      expect(await outbound.unrecorded("discord:dm:6:6", 10)).toEqual([]);
      const reply = await store.insertAgentMessage("telegram:1", "hi", "reply");
      const entry = await outbound.record(answer(reply.id));
      expect(entry).toMatchObject({ state: "pending", attempts: 0, mayRepeat: false });
      expect(await outbound.record(answer(reply.id))).toBeNull();
      const claimed = await outbound.claim(entry?.id ?? "", "worker-a", 60_000);
      expect(claimed).toMatchObject({ state: "sending", attempts: 1, mayRepeat: false });
      expect(await outbound.claim(entry?.id ?? "", "worker-b", 60_000)).toBeNull();
      await outbound.sent(entry?.id ?? "", "42");
      expect(await outbound.get(entry?.id ?? "")).toMatchObject({
        state: "sent",
        platformId: "42",
      });
      expect(await outbound.unsent("telegram")).toEqual([]);
      const missed = await store.insertAgentMessage(
        "telegram:1",
        "killed before recorded",
        "reply",
      );
      expect((await outbound.unrecorded("telegram:1", 10)).map((message) => message.id)).toEqual([
        missed.id,
      ]);
    } finally {
      await store.close();
    }
  });

  it("records a reply's parts and files in one write, once, and finds a reply with files none carries", async () => {
    const store = await adapter.open();
    try {
      const { outbound } = store.sourceStore();
      const file = { path: "out/a.txt", name: "a.txt", mediaType: "text/plain", size: 3 };
      const asked = await store.insertUserMessage("telegram:2", "a.txt please", "telegram:2");
      const reply = await store.settle({
        messageIds: [asked.id],
        state: "answered",
        reply: { kind: "reply", text: "see a.txt" },
        files: [file],
      });
      expect(await outbound.unrecorded("telegram:2", 10)).toEqual([
        {
          id: reply?.id,
          kind: "reply",
          text: "see a.txt",
          createdAt: reply?.createdAt,
          files: [file],
        },
      ]);
      const entries = [
        { ...answer(reply?.id), channelId: "telegram:2" },
        { ...answer(`${reply?.id}#2`), channelId: "telegram:2" },
        { ...answer(`${reply?.id}:file:1`), channelId: "telegram:2", kind: "file" as const },
      ];
      const recorded = await outbound.recordAll(entries);
      expect(recorded.map((entry) => entry.origin)).toEqual(entries.map((entry) => entry.origin));
      expect(await outbound.recordAll(entries)).toEqual([]);
      expect(await outbound.unrecorded("telegram:2", 10)).toEqual([]);
      expect((await outbound.unsent("telegram")).map((entry) => entry.id)).toEqual(
        recorded.map((entry) => entry.id),
      );
    } finally {
      await store.close();
    }
  });

  it("merges a waiting edit, and gives up with a line the ledger will not send", async () => {
    const store = await adapter.open();
    try {
      const { outbound } = store.sourceStore();
      const status = await outbound.record(answer());
      const edit = { ...answer(), kind: "progress" as const, action: "edit" as const };
      const first = await outbound.record({ ...edit, target: status?.id, body: "one" });
      const second = await outbound.record({ ...edit, target: status?.id, body: "two" });
      expect(second?.id).toBe(first?.id);
      expect((await outbound.get(first?.id ?? ""))?.body).toBe("two");
      await outbound.retry(status?.id ?? "", new Date(Date.now() + 1000), "502");
      await outbound.giveUp(status?.id ?? "", "An answer could not be delivered.");
      const messages = await store.listMessages("telegram:1");
      expect(messages.map((message) => [message.kind, message.text])).toEqual([
        ["error", "An answer could not be delivered."],
      ]);
      expect(await outbound.unrecorded("telegram:1", 10)).toEqual([]);
      expect((await outbound.unsent("telegram")).map((entry) => entry.id)).toEqual([first?.id]);
    } finally {
      await store.close();
    }
  });

  it("gives one code per person, a few at most, approved once; keeps grants", async () => {
    const store = await adapter.open();
    try {
      const { pairings, grants } = store.sourceStore();
      const person = (userId: string) => ({
        source: "telegram",
        userId,
        chatId: userId,
        name: userId,
      });
      const first = await pairings.request(person("7"), 60_000, 2);
      expect(first?.code).toMatch(/^[A-Z2-9]{8}$/);
      expect((await pairings.request(person("7"), 60_000, 2))?.code).toBe(first?.code);
      expect(await pairings.request(person("8"), 60_000, 2)).not.toBeNull();
      expect(await pairings.request(person("9"), 60_000, 2)).toBeNull();
      const approved = await pairings.approve(
        "telegram",
        (first?.code ?? "").toLowerCase(),
        "owner",
      );
      expect(approved).toMatchObject({ userId: "7", approvedBy: "owner" });
      expect(await pairings.approve("telegram", first?.code ?? "", "owner")).toBeNull();
      expect(await pairings.approved("telegram")).toEqual(["7"]);
      expect((await pairings.list("telegram")).map((request) => request.userId).sort()).toEqual([
        "7",
        "8",
      ]);
      await grants.add({
        channelId: "telegram:1",
        toolName: "Bash",
        command: "make",
        grantedBy: "Ada",
      });
      await grants.add({
        channelId: "telegram:1",
        toolName: "Bash",
        command: "make",
        grantedBy: "Ada",
      });
      expect(await grants.list("telegram:1")).toMatchObject([
        { toolName: "Bash", command: "make" },
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("the SQLite store's ledger after a gateway died while sending", () => {
  it("lets a claim of the dead gateway go at open: the send is taken again, may repeat", async () => {
    const path = databasePath();
    const before = new SqliteGatewayStore(path);
    const entry = await before.sourceStore().outbound.record(answer());
    await before.sourceStore().outbound.claim(entry?.id ?? "", "dead", 60_000);
    await before.close();
    const after = new SqliteGatewayStore(path);
    try {
      const { outbound } = after.sourceStore();
      expect((await outbound.unsent("telegram")).map((each) => each.state)).toEqual(["sending"]);
      const again = await outbound.claim(entry?.id ?? "", "alive", 60_000);
      expect(again).toMatchObject({ attempts: 2, mayRepeat: true });
    } finally {
      await after.close();
    }
  });
});

describe("a chat message's delivery claim, finished in the write that stores the message", () => {
  const claim = { source: "telegram", key: "5:77" };

  it("SQLite: holds across a restart after a kill between the two (a redelivery is dropped)", async () => {
    const path = databasePath();
    const killed = new SqliteGatewayStore(path);
    expect(await killed.sourceStore().deliveries.claim("telegram", claim.key)).toBe(true);
    await killed.insertUserMessage("telegram:5", "once", "telegram:5", undefined, undefined, claim);
    // Killed here: the source never finished the claim. Opening the file lets go of claims
    // left unfinished, but not of this one.
    await killed.close();
    const again = new SqliteGatewayStore(path);
    try {
      expect(await again.sourceStore().deliveries.claim("telegram", claim.key)).toBe(false);
    } finally {
      await again.close();
    }
  });

  it("PostgreSQL: holds past the unfinished-claim limit after a kill between the two", async () => {
    const url = await (await postgres()).createDatabase();
    const store = await PostgresGatewayStore.open(url);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      expect(await store.sourceStore().deliveries.claim("telegram", claim.key)).toBe(true);
      await store.insertUserMessage(
        "telegram:5",
        "once",
        "telegram:5",
        undefined,
        undefined,
        claim,
      );
      // As if the worker that claimed it died an hour ago (an unfinished claim is let go then).
      await pool.query("UPDATE inbound_deliveries SET created_at = created_at - interval '1 hour'");
      expect(await store.sourceStore().deliveries.claim("telegram", claim.key)).toBe(false);
      expect(await store.sourceStore().deliveries.claim("telegram", "5:78")).toBe(true);
    } finally {
      await pool.end();
      await store.close();
    }
  });
});
