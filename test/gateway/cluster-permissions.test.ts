/**
 * Permission requests across gateway workers on one PostgreSQL: a request raised by a channel's
 * agent on its owner is listed on every worker and answered through any of them, once; an
 * answer to one already answered is 409, and to one whose owner died, 404. The agents are the
 * fake Claude CLI asking `can_use_tool` over its control protocol.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import type { PermissionRequestInfo } from "../../src/gateway/index.js";
import { waitFor } from "../helpers/wait-for.js";
import { clusterFixture } from "./cluster-fixture.js";
import { openEvents, type SseEvent, type TestGateway } from "./helpers.js";

const { createDatabase, worker } = clusterFixture("cluster-permissions", {
  scenario: "permission",
});

const isRequest = (event: SseEvent) => event.data.type === "permission_request";

async function replyText(gateway: TestGateway, channel: string): Promise<string> {
  const reply = await waitFor(
    async () => (await gateway.messages(channel)).find((message) => message.kind === "reply"),
    `the reply on ${channel}`,
    30_000,
  );
  return reply.text;
}

async function listed(gateway: TestGateway, channel: string): Promise<PermissionRequestInfo[]> {
  const { body } = await gateway.api<{ requests: PermissionRequestInfo[] }>(
    "GET",
    `/api/channels/${channel}/permissions`,
  );
  return body.requests;
}

describe("permission requests across workers", () => {
  it("are listed on every worker and answered through a non-owner, once", async () => {
    const url = await createDatabase();
    const [a, b, c] = await Promise.all([
      worker(url, "perm-a"),
      worker(url, "perm-b"),
      worker(url, "perm-c"),
    ]);
    const onB = openEvents(`${b.url}/api/channels/asks/events?token=${b.token}`);
    try {
      await waitFor(() => onB.comments.length > 0, "worker B's stream");
      const posted = await a.api<{ disposition: string }>("POST", "/api/channels/asks/messages", {
        text: "touch it",
      });
      expect(posted.body.disposition).toBe("started");
      const asked = await onB.waitFor(isRequest, "the request, seen on worker B");
      const request = asked.data.request as PermissionRequestInfo;
      for (const gateway of [a, b, c]) {
        expect(await listed(gateway, "asks")).toEqual([request]);
      }

      // Two people answer through the two workers that do not own the channel, at once.
      const [throughB, throughC] = await Promise.all([
        b.api<{ request?: { decision: string }; error?: string }>(
          "POST",
          `/api/channels/asks/permissions/${request.id}`,
          { decision: "deny", message: "not from B" },
        ),
        c.api<{ request?: { decision: string }; error?: string }>(
          "POST",
          `/api/channels/asks/permissions/${request.id}`,
          { decision: "allow" },
        ),
      ]);
      expect([throughB.status, throughC.status].sort()).toEqual([200, 409]);
      const winner = throughB.status === 200 ? throughB : throughC;
      const loser = throughB.status === 200 ? throughC : throughB;
      expect(loser.body.error).toMatch(/already (allowed|denied)/);
      expect(winner.body.request).toMatchObject({ id: request.id, toolName: "Bash" });

      // The owner's agent got the one answer that won.
      const reply = await replyText(b, "asks");
      expect(reply).toBe(
        throughB.status === 200
          ? "permission: deny not from B"
          : 'permission: allow {"command":"touch made-by-tool"}',
      );
      const resolved = await onB.waitFor(
        (event) => event.data.type === "permission_resolved",
        "permission_resolved on worker B",
      );
      expect(resolved.data).toMatchObject({ requestId: request.id, resolvedBy: "person" });
      expect(onB.events.filter((event) => event.data.type === "permission_resolved")).toHaveLength(
        1,
      );
      for (const gateway of [a, b, c]) expect(await listed(gateway, "asks")).toEqual([]);
      // Answering again, through the owner itself this time.
      const again = await a.api<{ error: string }>(
        "POST",
        `/api/channels/asks/permissions/${request.id}`,
        { decision: "allow" },
      );
      expect(again.status).toBe(409);
      const unknown = await b.api<{ error: string }>(
        "POST",
        "/api/channels/asks/permissions/no-such-request",
        { decision: "allow" },
      );
      expect(unknown.status).toBe(404);
    } finally {
      await onB.close();
    }
  });

  it("answer 404 for a request whose owner died, and list it nowhere", async () => {
    const url = await createDatabase();
    const survivor = await worker(url, "perm-survivor");
    // What a worker killed while its agent waited leaves: the request, and a lease gone stale.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const request: PermissionRequestInfo = {
        id: "req-of-the-dead",
        channelId: "orphaned",
        toolName: "Bash",
        input: { command: "rm -rf build" },
        description: null,
        createdAt: new Date().toISOString(),
      };
      await client.query(
        `INSERT INTO permission_requests (id, channel_id, owner, request, created_at)
         VALUES ($1, 'orphaned', 'dead-worker', $2::json, now())`,
        [request.id, JSON.stringify(request)],
      );
      await client.query(
        `INSERT INTO leases (channel_id, owner, expires_at)
         VALUES ('orphaned', 'dead-worker', now() - interval '1 second')`,
      );
    } finally {
      await client.end();
    }
    expect(await listed(survivor, "orphaned")).toEqual([]);
    const answer = await survivor.api<{ error: string }>(
      "POST",
      "/api/channels/orphaned/permissions/req-of-the-dead",
      { decision: "allow" },
    );
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatch(/dead-worker/);
    expect(answer.body.error).toMatch(/no longer/);
  });
});
