/**
 * Permission prompts through the HTTP API. Rudder itself is the engine, on the fake
 * Messages API: the model runs `rm victim.txt`, which rudder's gate asks about, so the
 * gateway holds the tool call until a person (here: the test) decides, the timeout
 * denies it, or the turn ends.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PermissionRequestInfo } from "../../src/gateway/index.js";
import {
  echoFallback,
  type FakeMessagesApi,
  lastToolResults,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import {
  openEvents,
  type SseEvent,
  startRudderGateway,
  startTestGateway,
  type TestGateway,
} from "./helpers.js";

/** The model deletes the victim, then reports what its tool said. */
const deleteVictim: ScriptStep[] = [
  { toolUse: { name: "Bash", input: { command: "rm victim.txt" } } },
  {
    reply: (request: RecordedRequest) => ({
      text: `tool said: ${JSON.stringify(lastToolResults(request)[0]?.content ?? "")}`,
    }),
  },
];

let api: FakeMessagesApi;
let workspace: string;

beforeAll(async () => {
  api = await startFakeMessagesApi({ fallback: echoFallback });
  workspace = mkdtempSync(join(tmpdir(), "rudder-permissions-"));
  // The user asks about rm (in the sandbox, only ask rules and the deny list stop a command).
  mkdirSync(join(workspace, ".rudder"), { recursive: true });
  writeFileSync(
    join(workspace, ".rudder", "settings.json"),
    '{"permissions":{"ask":["Bash(rm:*)"]}}',
  );
});

afterAll(async () => {
  await api?.close();
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

function rudderGateway(
  prefix: string,
  extra: Partial<Parameters<typeof startRudderGateway>[0]> = {},
) {
  return startRudderGateway({
    prefix,
    apiUrl: api.url,
    workspace,
    env: { ANTHROPIC_AUTH_TOKEN: undefined },
    ...extra,
  });
}

function victim(): string {
  const path = join(workspace, "victim.txt");
  writeFileSync(path, "precious");
  return path;
}

function isRequest(event: SseEvent): boolean {
  return event.data.type === "permission_request";
}

async function replyOf(gateway: TestGateway, channel: string): Promise<string> {
  const messages = await waitFor(
    async () => {
      const list = await gateway.messages(channel);
      return list.some((message) => message.kind === "reply") ? list : undefined;
    },
    `the reply on ${channel}`,
    30_000,
  );
  return messages.find((message) => message.kind === "reply")?.text ?? "";
}

describe("permission prompts with rudder as the engine", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await rudderGateway("permissions");
  });

  afterAll(async () => {
    await gateway?.cleanup();
  });

  it("holds a bash rm until a person allows it, over the API and the event stream", async () => {
    const file = victim();
    api.push(...deleteVictim);
    const events = openEvents(`${gateway.url}/api/channels/allow/events?token=${gateway.token}`);
    try {
      await gateway.api("POST", "/api/channels/allow/messages", { text: "delete the victim" });
      const asked = await events.waitFor(isRequest, "the permission_request event");
      const request = asked.data.request as PermissionRequestInfo;
      expect(request).toMatchObject({
        channelId: "allow",
        toolName: "Bash",
        input: { command: "rm victim.txt" },
      });
      expect(typeof request.description).toBe("string");
      expect(Number.isNaN(Date.parse(request.createdAt))).toBe(false);

      const listed = await gateway.api<{ requests: PermissionRequestInfo[] }>(
        "GET",
        "/api/channels/allow/permissions",
      );
      expect(listed.status).toBe(200);
      expect(listed.body.requests).toEqual([request]);
      const elsewhere = await gateway.api<{ requests: unknown[] }>(
        "GET",
        "/api/channels/other/permissions",
      );
      expect(elsewhere.body.requests).toEqual([]);
      expect(existsSync(file)).toBe(true);

      const path = `/api/channels/allow/permissions/${request.id}`;
      const wrongChannel = await gateway.api(
        "POST",
        `/api/channels/other/permissions/${request.id}`,
        {
          decision: "allow",
        },
      );
      expect(wrongChannel.status).toBe(404);
      const badBody = await gateway.api<{ error: string }>("POST", path, { decision: "maybe" });
      expect(badBody.status).toBe(400);
      expect(badBody.body.error).toContain('decision must be "allow" or "deny"');
      const noDecision = await gateway.api<{ error: string }>("POST", path, {});
      expect(noDecision.status).toBe(400);
      expect(noDecision.body.error).toBe("decision is required");

      const allowed = await gateway.api<{ request: PermissionRequestInfo & { decision: string } }>(
        "POST",
        path,
        { decision: "allow" },
      );
      expect(allowed.status).toBe(200);
      expect(allowed.body.request).toEqual({ ...request, decision: "allow" });
      const again = await gateway.api<{ error: string }>("POST", path, { decision: "deny" });
      expect(again.status).toBe(409);
      expect(again.body.error).toContain("already allowed");

      const resolved = await events.waitFor(
        (event) => event.data.type === "permission_resolved",
        "the permission_resolved event",
      );
      expect(resolved.data).toEqual({
        type: "permission_resolved",
        requestId: request.id,
        decision: "allow",
        resolvedBy: "person",
        channelId: "allow",
      });
      const position = (id: string | undefined) => Number(id?.split("-")[1]);
      expect(position(resolved.id)).toBeGreaterThan(position(asked.id));
      expect(await replyOf(gateway, "allow")).toContain("tool said:");
      expect(existsSync(file)).toBe(false);
      const after = await gateway.api<{ requests: unknown[] }>(
        "GET",
        "/api/channels/allow/permissions",
      );
      expect(after.body.requests).toEqual([]);
    } finally {
      await events.close();
    }
  });

  it("denies with the person's message, which the model reads", async () => {
    const file = victim();
    api.push(...deleteVictim);
    const events = openEvents(`${gateway.url}/api/channels/deny/events?token=${gateway.token}`);
    try {
      await gateway.api("POST", "/api/channels/deny/messages", { text: "delete the victim" });
      const asked = await events.waitFor(isRequest, "the permission_request event");
      const request = asked.data.request as PermissionRequestInfo;
      const before = api.mainRequests().length;
      const denied = await gateway.api("POST", `/api/channels/deny/permissions/${request.id}`, {
        decision: "deny",
        message: "keep that file, it is the only copy",
      });
      expect(denied.status).toBe(200);
      const reply = await replyOf(gateway, "deny");
      expect(reply).toContain("keep that file, it is the only copy");
      const next = api.mainRequests()[before];
      expect(JSON.stringify(next?.body.messages)).toContain("keep that file, it is the only copy");
      expect(existsSync(file)).toBe(true);
      const resolved = await events.waitFor(
        (event) => event.data.type === "permission_resolved",
        "the permission_resolved event",
      );
      expect(resolved.data).toMatchObject({
        decision: "deny",
        resolvedBy: "person",
        message: "keep that file, it is the only copy",
      });
      const unknown = await gateway.api<{ error: string }>(
        "POST",
        "/api/channels/deny/permissions/no-such-request",
        { decision: "allow" },
      );
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toContain("no pending permission request");
    } finally {
      await events.close();
    }
  });

  it("allow always: the same command in the same channel runs without asking again", async () => {
    const channel = "always";
    const events = openEvents(
      `${gateway.url}/api/channels/${channel}/events?token=${gateway.token}`,
    );
    const replies = () => events.events.filter((event) => event.data.type === "reply").length;
    try {
      victim();
      api.push(...deleteVictim);
      await gateway.api("POST", `/api/channels/${channel}/messages`, { text: "delete it" });
      const asked = await events.waitFor(isRequest, "the permission_request event");
      const request = asked.data.request as PermissionRequestInfo;
      const path = `/api/channels/${channel}/permissions/${request.id}`;
      const denyAlways = await gateway.api<{ error: string }>("POST", path, {
        decision: "deny",
        always: true,
      });
      expect(denyAlways.status).toBe(400);
      expect(denyAlways.body.error).toBe('always goes only with decision "allow"');
      const allowed = await gateway.api("POST", path, { decision: "allow", always: true });
      expect(allowed.status).toBe(200);
      await waitFor(() => replies() === 1 || undefined, "the first reply");

      // The same command again: allowed by the grant, no request, the file gone.
      const file = victim();
      api.push(...deleteVictim);
      await gateway.api("POST", `/api/channels/${channel}/messages`, { text: "again" });
      await waitFor(() => replies() === 2 || undefined, "the second reply");
      expect(events.events.filter(isRequest)).toHaveLength(1);
      expect(existsSync(file)).toBe(false);
    } finally {
      await events.close();
    }
  });

  it("needs the bearer token", async () => {
    const response = await fetch(`${gateway.url}/api/channels/allow/permissions`);
    expect(response.status).toBe(401);
    const posted = await fetch(`${gateway.url}/api/channels/allow/permissions/x`, {
      method: "POST",
      body: JSON.stringify({ decision: "allow" }),
    });
    expect(posted.status).toBe(401);
  });
});

it("denies a request nobody answers after the timeout", async () => {
  const gateway = await rudderGateway("permissions-timeout", { permissionTimeoutMs: 400 });
  const events = openEvents(`${gateway.url}/api/channels/late/events?token=${gateway.token}`);
  try {
    const file = victim();
    api.push(...deleteVictim);
    await gateway.api("POST", "/api/channels/late/messages", { text: "delete the victim" });
    const asked = await events.waitFor(isRequest, "the permission_request event");
    const request = asked.data.request as PermissionRequestInfo;
    const resolved = await events.waitFor(
      (event) => event.data.type === "permission_resolved",
      "the permission_resolved event",
    );
    expect(resolved.data).toMatchObject({
      requestId: request.id,
      decision: "deny",
      resolvedBy: "timeout",
    });
    expect(String(resolved.data.message)).toContain("nobody answered");
    expect(await replyOf(gateway, "late")).toContain("nobody answered");
    expect(existsSync(file)).toBe(true);
    const expired = await gateway.api("POST", `/api/channels/late/permissions/${request.id}`, {
      decision: "allow",
    });
    expect(expired.status).toBe(404);
  } finally {
    await events.close();
    await gateway.cleanup();
  }
});

it("leaves asking to the agent when permission prompts are off", async () => {
  const gateway = await rudderGateway("permissions-off", { permissionPrompts: false });
  const events = openEvents(`${gateway.url}/api/channels/off/events?token=${gateway.token}`);
  try {
    const file = victim();
    api.push(...deleteVictim);
    await gateway.api("POST", "/api/channels/off/messages", { text: "delete the victim" });
    expect(await replyOf(gateway, "off")).toContain("tool said:");
    expect(existsSync(file)).toBe(true);
    expect(events.events.filter(isRequest)).toEqual([]);
  } finally {
    await events.close();
    await gateway.cleanup();
  }
});

describe("permission prompts with the fake Claude Code CLI", () => {
  it("passes a person's decision to a one-shot process", async () => {
    const gateway = await startTestGateway({
      prefix: "permissions-fake",
      scenario: "permission",
      maxLive: 0,
    });
    const events = openEvents(`${gateway.url}/api/channels/fake/events?token=${gateway.token}`);
    try {
      const posted = await gateway.api<{ disposition: string }>(
        "POST",
        "/api/channels/fake/messages",
        { text: "touch it" },
      );
      expect(posted.body.disposition).toBe("one_shot");
      const asked = await events.waitFor(isRequest, "the permission_request event");
      const request = asked.data.request as PermissionRequestInfo;
      expect(request).toMatchObject({ toolName: "Bash", description: null });
      await gateway.api("POST", `/api/channels/fake/permissions/${request.id}`, {
        decision: "deny",
        message: "not today",
      });
      expect(await replyOf(gateway, "fake")).toBe("permission: deny not today");
    } finally {
      await events.close();
      await gateway.cleanup();
    }
  });

  it("denies what is pending when the turn ends", async () => {
    const gateway = await startTestGateway({
      prefix: "permissions-turn-end",
      scenario: "permission",
      turnTimeoutMs: 1500,
    });
    const events = openEvents(`${gateway.url}/api/channels/ends/events?token=${gateway.token}`);
    try {
      await gateway.api("POST", "/api/channels/ends/messages", { text: "touch it" });
      const asked = await events.waitFor(isRequest, "the permission_request event");
      const request = asked.data.request as PermissionRequestInfo;
      const resolved = await events.waitFor(
        (event) => event.data.type === "permission_resolved",
        "the permission_resolved event",
      );
      expect(resolved.data).toMatchObject({
        requestId: request.id,
        decision: "deny",
        resolvedBy: "turn_end",
      });
      const listed = await gateway.api<{ requests: unknown[] }>(
        "GET",
        "/api/channels/ends/permissions",
      );
      expect(listed.body.requests).toEqual([]);
    } finally {
      await events.close();
      await gateway.cleanup();
    }
  });
});
