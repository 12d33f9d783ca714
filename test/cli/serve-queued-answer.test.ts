/**
 * A message posted while the channel's agent streams its answer to the one before, through
 * `rudder serve`, for the real Claude Code and for rudder. Claude Code queues it as a turn of
 * its own (a second `result`), so the first message is stored as answered, with its own reply,
 * while the second still runs; rudder folds it into the running turn, whose one result answers
 * both. Where the two differ, the test says which is which.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeMessagesApi,
  lastUserText,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { type RudderRun, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { type ListedMessages, startEngineWorker } from "./serve-worker.js";

let root: string;
let api: FakeMessagesApi;
const running: RudderRun[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-serve-queued-"));
  api = await startFakeMessagesApi({
    // Both answers stream slowly: the first for 3 s (the second message is posted meanwhile),
    // the second's for 3 s (so the first is seen answered while the second still runs).
    fallback: (request) =>
      lastUserText(request).includes("second question")
        ? { text: "the second answer", chunks: 12, chunkDelayMs: 250 }
        : { text: "the first answer", chunks: 12, chunkDelayMs: 250 },
  });
}, 60_000);

afterAll(async () => {
  for (const run of running) await stopRudder(run);
  await api?.close();
  rmSync(root, { recursive: true, force: true });
});

describe.each(["claude", "rudder"] as const)("--engine %s", (engine) => {
  it("a message posted while the answer before streams", async () => {
    const gateway = await startEngineWorker(join(root, engine), engine, api.url, running);
    const channel = `queued-${engine}`;
    /** The channel's messages, once the message `id` is answered. */
    const answered = (id: string, what: string) =>
      waitFor(
        async () => {
          const { messages } = await gateway.api<ListedMessages>(
            "GET",
            `/api/channels/${channel}/messages`,
          );
          return messages.find((message) => message.id === id)?.state === "answered"
            ? messages
            : undefined;
        },
        what,
        60_000,
      );
    const before = api.mainRequests().length;
    const first = await gateway.api<{ id: string }>("POST", `/api/channels/${channel}/messages`, {
      text: "the first question",
    });
    // Posted once the model is streaming the first answer.
    await waitFor(() => api.mainRequests().length > before, "the first request", 60_000);
    const second = await gateway.api<{ id: string; disposition: string }>(
      "POST",
      `/api/channels/${channel}/messages`,
      { text: "the second question" },
    );
    expect(second.disposition).toBe("steered");

    const firstAnswered = await answered(first.id, "the first message answered");
    const secondThen = firstAnswered.find((message) => message.id === second.id)?.state;
    const firstReply = firstAnswered.find((message) => message.replyTo === first.id);
    if (engine === "claude") {
      // Its own answer, stored while the queued second turn still streams.
      expect(secondThen).toBe("steered");
      expect(firstReply?.text).toBe("the first answer");
    } else {
      // One turn, one result for both.
      expect(secondThen).toBe("answered");
      expect(firstReply?.text).toContain("the second answer");
    }
    const all = await answered(second.id, "the second message answered");
    const replies = all.filter((message) => message.kind === "reply");
    if (engine === "claude") {
      expect(replies.map((reply) => reply.replyTo)).toEqual([first.id, second.id]);
      expect(replies[1]?.text).toBe("the second answer");
    } else {
      // The one reply answers the turn's first message, and so both.
      expect(replies.map((reply) => reply.replyTo)).toEqual([first.id]);
    }
    expect(all.filter((message) => message.kind === "error")).toEqual([]);
  }, 120_000);
});
