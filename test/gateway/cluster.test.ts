/**
 * Two gateway workers on one PostgreSQL database, on loopback: each channel is driven by the
 * worker holding its lease, a message through the other worker reaches the owner, and a
 * channel whose owner is gone is taken by the other.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/wait-for.js";
import { clusterFixture } from "./cluster-fixture.js";
import { fakeLogEntries, openEvents, type SseEvent, type TestGateway } from "./helpers.js";

const { createDatabase, worker, gateways } = clusterFixture("cluster");

type Posted = { id: string; disposition: string };

async function sql(url: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function replyTo(gateway: TestGateway, channelId: string, messageId: string) {
  return waitFor(
    async () =>
      (await gateway.messages(channelId)).find(
        (message) => message.replyTo === messageId && message.kind === "reply",
      ),
    `the reply to ${messageId}`,
    30_000,
  );
}

/** The prompts the fake agents of `gateway` were given. */
function prompts(gateway: TestGateway): string[] {
  return fakeLogEntries(gateway.fakeLog).flatMap((entry) => {
    const message = entry.message as
      | { type?: string; message?: { content?: string | Array<{ text?: string }> } }
      | undefined;
    if (entry.event !== "stdin" || message?.type !== "user") return [];
    const content = message.message?.content;
    return [
      typeof content === "string" ? content : (content ?? []).map((part) => part.text).join(""),
    ];
  });
}

describe("two gateway workers on one PostgreSQL", () => {
  it("trade the page link's code printed by one worker once, through any worker", async () => {
    const url = await createDatabase();
    const a = await worker(url, "link-a");
    const b = await worker(url, "link-b");
    const redeem = async (gateway: TestGateway, code: string) =>
      (
        await fetch(`${gateway.url}/api/link-codes/redeem`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ code }),
        })
      ).status;
    const code = new URL(a.pageLink).hash.replace(/^#code=/, "");
    expect(await redeem(b, code)).toBe(200);
    expect(await redeem(a, code)).toBe(401);
    expect(await redeem(b, code)).toBe(401);
  });

  it("route a message through either worker to the channel's owner, readable through both", async () => {
    const url = await createDatabase();
    const a = await worker(url, "worker-a");
    const b = await worker(url, "worker-b");
    expect(b.token).toBe(a.token);
    expect(await (await fetch(`${a.url}/api/health`)).json()).toMatchObject({ worker: "worker-a" });
    expect(await (await fetch(`${b.url}/api/health`)).json()).toMatchObject({ worker: "worker-b" });

    const first = await a.api<Posted>("POST", "/api/channels/shared/messages", { text: "one" });
    expect(["started", "one_shot"]).toContain(first.body.disposition);
    expect((await replyTo(a, "shared", first.body.id)).text).toMatch(/^echo: [\s\S]*one/);

    const second = await b.api<Posted>("POST", "/api/channels/shared/messages", { text: "two" });
    expect(second.status).toBe(202);
    expect(second.body.disposition).toBe("forwarded");
    expect((await replyTo(b, "shared", second.body.id)).text).toMatch(/^echo: [\s\S]*two/);
    expect(prompts(a)).toEqual([expect.stringContaining("one"), expect.stringContaining("two")]);
    expect(prompts(b)).toEqual([]);
    const throughA = await a.messages("shared");
    const throughB = await b.messages("shared");
    expect(throughB.map((message) => [message.kind, message.text])).toEqual(
      throughA.map((message) => [message.kind, message.text]),
    );
    expect(throughB.filter((message) => message.kind === "reply")).toHaveLength(2);

    // A worker that stops cleanly hands its channels over at once.
    await a.cleanup();
    gateways.splice(gateways.indexOf(a), 1);
    const third = await b.api<Posted>("POST", "/api/channels/shared/messages", { text: "three" });
    expect(["started", "one_shot"]).toContain(third.body.disposition);
    expect((await replyTo(b, "shared", third.body.id)).text).toMatch(/^echo: [\s\S]*three/);
    expect(prompts(b)).toEqual([expect.stringContaining("three")]);
  });

  it("stream a channel's events on every worker, resuming with Last-Event-ID on either", async () => {
    const url = await createDatabase();
    const a = await worker(url, "events-a");
    const b = await worker(url, "events-b");
    const eventsUrl = (gateway: TestGateway) =>
      `${gateway.url}/api/channels/watched/events?token=${gateway.token}`;
    const onA = openEvents(eventsUrl(a));
    const onB = openEvents(eventsUrl(b));
    const isReplyTo = (id: string) => (event: SseEvent) =>
      event.data.type === "reply" &&
      (event.data.message as { replyTo?: string } | undefined)?.replyTo === id;
    const seen = (events: SseEvent[]) => events.map((event) => [event.id, event.data]);
    try {
      await waitFor(() => onA.comments.length > 0 && onB.comments.length > 0, "both streams");
      const first = await a.api<Posted>("POST", "/api/channels/watched/messages", { text: "one" });
      expect(["started", "one_shot"]).toContain(first.body.disposition);
      await onA.waitFor(isReplyTo(first.body.id), "the first reply on worker A");
      await onB.waitFor(isReplyTo(first.body.id), "the first reply on worker B");
      // Worker B ran nothing, yet streams the same events under the same ids as the owner.
      expect(prompts(b)).toEqual([]);
      expect(onB.events.map((event) => event.data.type)).toContain("turn_start");
      await waitFor(
        () => JSON.stringify(seen(onB.events)) === JSON.stringify(seen(onA.events)),
        "worker B's stream to match worker A's",
      );
      const lastId = onB.events.at(-1)!.id!;
      await onB.close();

      const second = await a.api<Posted>("POST", "/api/channels/watched/messages", { text: "two" });
      await onA.waitFor(isReplyTo(second.body.id), "the second reply on worker A");
      const resumed = openEvents(eventsUrl(b), { "last-event-id": lastId });
      try {
        const missed = () => onA.events.slice(onA.events.findIndex((e) => e.id === lastId) + 1);
        await resumed.waitFor(isReplyTo(second.body.id), "the second reply, resumed on B");
        await waitFor(
          () => JSON.stringify(seen(resumed.events)) === JSON.stringify(seen(missed())),
          "the resumed stream to hold exactly what was missed",
        );
        expect(resumed.events.map((event) => event.data.type)).toContain("turn_start");
        expect(resumed.events.some(isReplyTo(first.body.id))).toBe(false);
        const ids = [...onB.events, ...resumed.events].map((event) =>
          Number(event.id!.split("-")[1]),
        );
        expect(new Set(ids).size).toBe(ids.length);
        expect([...ids].sort((x, y) => x - y)).toEqual(ids);
      } finally {
        await resumed.close();
      }
    } finally {
      await onA.close();
      await onB.close();
    }
  });

  it("steer the owner's running turn with a message through the other worker, saying so", async () => {
    const url = await createDatabase();
    const a = await worker(url, "steer-a", { scenario: "steer" });
    const b = await worker(url, "steer-b");
    const first = await a.api<Posted>("POST", "/api/channels/busy/messages", { text: "first" });
    expect(first.body.disposition).toBe("started");
    const second = await b.api<Posted>("POST", "/api/channels/busy/messages", { text: "second" });
    expect(second.status).toBe(202);
    expect(second.body.disposition).toBe("steered");
    const reply = await replyTo(b, "busy", first.body.id);
    expect(reply.text).toContain("steered:");
    expect(reply.text).toContain("second");
    expect(prompts(b)).toEqual([]);
    const messages = await b.messages("busy");
    expect(messages.filter((message) => message.kind === "reply")).toHaveLength(1);
  });

  it("take over a channel whose owner died, answering its unanswered message once", async () => {
    const url = await createDatabase();
    const survivor = await worker(url, "survivor");
    // What a worker killed mid-turn leaves: a stored, unanswered message and a lease nobody renews.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO channels (id, created_at, last_activity_at) VALUES ('orphan', now(), now())`,
      );
      await client.query(
        `INSERT INTO messages (id, channel_id, role, kind, text, state, attempts, source,
           created_at, updated_at)
         VALUES ('m-orphan', 'orphan', 'user', 'user', 'are you there?', 'received', 1, 'http',
           now(), now())`,
      );
      await client.query(
        `INSERT INTO leases (channel_id, owner, expires_at)
         VALUES ('orphan', 'dead-worker', now() + interval '1 second')`,
      );
    } finally {
      await client.end();
    }
    expect((await replyTo(survivor, "orphan", "m-orphan")).text).toMatch(
      /^echo: [\s\S]*are you there?/,
    );
    const messages = await survivor.messages("orphan");
    expect(messages.filter((message) => message.kind === "reply")).toHaveLength(1);
    expect(messages[0]).toMatchObject({ id: "m-orphan", state: "answered" });
    expect(prompts(survivor)).toEqual([expect.stringContaining("are you there?")]);
  });

  it("stop a channel's agent when its lease is lost, and store no answer of the stale turn", async () => {
    const url = await createDatabase();
    const a = await worker(url, "stale", { scenario: "hold" });
    const posted = await a.api<Posted>("POST", "/api/channels/held/messages", { text: "wait" });
    expect(posted.body.disposition).toBe("started");
    await waitFor(async () => {
      const { body } = await a.api<{ runners: Array<{ channelId: string }> }>(
        "GET",
        "/api/runners",
      );
      return body.runners.some((runner) => runner.channelId === "held");
    }, "the held turn's process");
    // Another worker took the channel (as after a stall longer than the lease).
    await sql(url, "UPDATE leases SET owner = 'usurper', expires_at = now() + interval '1 hour'");
    await waitFor(
      async () => {
        const { body } = await a.api<{
          channels: Array<{ id: string; inflight: boolean; live: boolean }>;
        }>("GET", "/api/channels");
        const channel = body.channels.find((each) => each.id === "held");
        return channel !== undefined && !channel.inflight && !channel.live;
      },
      "the stale worker to stop the channel's turn",
      30_000,
    );
    const messages = await a.messages("held");
    expect(messages.map((message) => message.kind)).toEqual(["user"]);
    expect(messages[0]?.state).not.toBe("answered");
    // A message for it now goes to the channel's owner, not to a new process here.
    const next = await a.api<Posted>("POST", "/api/channels/held/messages", { text: "again" });
    expect(next.body.disposition).toBe("forwarded");
  });

  it("fire a schedule missed while the workers were down once, answered on one of them", async () => {
    const url = await createDatabase();
    const first = await worker(url, "first");
    const created = await first.api<{ schedule: { id: string } }>("POST", "/api/schedules", {
      cron: "0 0 1 1 *",
      channel: "yearly",
      prompt: "happy new year",
    });
    expect(created.status).toBe(201);
    await first.cleanup();
    gateways.splice(gateways.indexOf(first), 1);
    await sql(url, "UPDATE schedules SET next_run_at = now() - interval '1 minute'");
    // Each worker's start resolves once it stored the missed firing's prompt or lost its claim.
    const [a, b] = await Promise.all([worker(url, "left"), worker(url, "right")]);
    const reply = await waitFor(
      async () => (await a.messages("yearly")).find((message) => message.kind === "reply"),
      "the schedule's answer",
      30_000,
    );
    expect(reply.text).toMatch(/happy new year/);
    // Each worker may have seen the missed firing (claims of one firing: store/leases.test.ts).
    await waitFor(
      async () => (await sql(url, "SELECT count(*)::int AS n FROM leases"))[0]?.n === 1,
      "the channel's lease",
    );
    const users = (await b.messages("yearly")).filter((message) => message.kind === "user");
    expect(users.map((message) => message.text)).toEqual(["happy new year"]);
    expect([...prompts(a), ...prompts(b)]).toEqual([expect.stringContaining("happy new year")]);
  });
});
