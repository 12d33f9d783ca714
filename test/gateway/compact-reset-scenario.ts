/**
 * One scenario for every engine: a channel's conversation is compacted with
 * `POST /api/channels/:id/compact` (its focus reaching the summary request),
 * then reset with `POST /api/channels/:id/reset`, after which the next message
 * starts a new session that no longer carries what was said before.
 */
import { expect } from "vitest";
import type { FakeMessagesApi } from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import type { TestGateway } from "./helpers.js";

type Channel = {
  id: string;
  sessionId: string | null;
  context: { tokens: number; window: number | null } | null;
};

/** Runs the scenario on `channelId` and answers the channel's stored message kinds. */
export async function compactThenReset(
  gateway: TestGateway,
  api: FakeMessagesApi,
  channelId: string,
  replyTimeoutMs: number,
): Promise<string[]> {
  const channel = async () =>
    (await gateway.api<{ channels: Channel[] }>("GET", "/api/channels")).body.channels.find(
      (entry) => entry.id === channelId,
    );
  const replies = async () =>
    (await gateway.messages(channelId)).filter((message) => message.kind === "reply").length;
  await gateway.api("POST", `/api/channels/${channelId}/messages`, {
    text: "the codeword is heron",
  });
  await waitFor(async () => (await replies()) === 1, "the first reply", replyTimeoutMs);
  const before = await channel();
  expect(before?.context?.tokens).toBeGreaterThan(0);
  expect(before?.context?.window).toEqual(expect.any(Number));

  const compacted = await gateway.api<Record<string, unknown>>(
    "POST",
    `/api/channels/${channelId}/compact`,
    { instructions: "keep the codeword" },
  );
  expect(compacted.status, JSON.stringify(compacted.body)).toBe(200);
  expect(compacted.body).toMatchObject({
    command: "compact",
    preTokens: expect.any(Number),
    postTokens: expect.any(Number),
    sessionId: before?.sessionId,
    message: { kind: "compaction" },
  });
  // The summary request (one model call, no tools run) carried the focus.
  expect(JSON.stringify(api.requests.map((request) => request.body))).toContain(
    "keep the codeword",
  );

  const reset = await gateway.api("POST", `/api/channels/${channelId}/reset`);
  expect(reset).toMatchObject({
    status: 200,
    body: { command: "reset", previousSessionId: before?.sessionId },
  });
  await gateway.api("POST", `/api/channels/${channelId}/messages`, { text: "what was it?" });
  await waitFor(
    async () => (await replies()) === 2,
    "the reply in the new conversation",
    replyTimeoutMs,
  );
  const after = await channel();
  expect(after?.sessionId).toEqual(expect.any(String));
  expect(after?.sessionId).not.toBe(before?.sessionId);
  const last = JSON.stringify(api.mainRequests().at(-1)?.body.messages);
  expect(last).toContain("what was it?");
  expect(last).not.toContain("heron");
  return (await gateway.messages(channelId)).map((message) => message.kind);
}
