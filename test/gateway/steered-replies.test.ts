/**
 * Every word the model says to a channel is stored: message A starts a turn, B (and C) steer it
 * and the model answers A, then the others, in one result. The channel keeps the whole of what
 * the model said (A's answer too, not only the turn's last text), as one reply linked to each
 * message it answers, exactly as the live stream showed it. Both engines: rudder itself, and
 * the real Claude Code CLI (a message written while a tool runs is folded into the turn).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { claudeCodeBinary, claudeCodeEnv } from "../helpers/claude-code-env.js";
import {
  type FakeMessagesApi,
  lastUserText,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { waitFor } from "../helpers/wait-for.js";
import {
  type ApiMessage,
  openEvents,
  startRudderGateway,
  startTestGateway,
  type TestGateway,
} from "./helpers.js";

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function folder(prefix: string): string {
  const path = mkdtempSync(join(tmpdir(), `rudder-steered-${prefix}-`));
  cleanups.push(() => rmSync(path, { recursive: true, force: true }));
  return path;
}

async function fakeApi(
  script: Parameters<typeof startFakeMessagesApi>[0],
): Promise<FakeMessagesApi> {
  const api = await startFakeMessagesApi(script);
  cleanups.push(() => api.close());
  return api;
}

/** The unwrapped text of the last user message a request carried, its fences and `From:` lines dropped. */
function plainLastUser(request: Parameters<typeof lastUserText>[0]): string {
  return lastUserText(request)
    .replace(/\[(END )?EXTERNAL CONTENT\]/g, "")
    .replace(/^From: .*$/gm, "")
    .replace(/<[^>]+>/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * Posts `first`, waits for the model to be asked, posts `later` (steering the turn); returns
 * the channel's messages once all are answered, and the text the live stream showed.
 */
async function steeredTurn(
  gateway: TestGateway,
  api: FakeMessagesApi,
  first: string,
  later: string[],
): Promise<{ ids: string[]; messages: ApiMessage[]; streamed: string }> {
  const channel = "steered";
  const events = openEvents(`${gateway.url}/api/channels/${channel}/events?token=${gateway.token}`);
  const post = async (text: string) =>
    (
      await gateway.api<{ id: string; disposition: string }>(
        "POST",
        `/api/channels/${channel}/messages`,
        { text },
      )
    ).body;
  const ids = [(await post(first)).id];
  await api.waitForMainRequests(1, 60_000);
  for (const text of later) {
    const posted = await post(text);
    expect(posted.disposition).toBe("steered");
    ids.push(posted.id);
  }
  const messages = await waitFor(
    async () => {
      const list = await gateway.messages(channel);
      const users = list.filter((message) => message.kind === "user");
      return users.every((message) => message.state === "answered") ? list : undefined;
    },
    "every message answered",
    60_000,
  );
  await events.waitFor((event) => event.data.type === "reply", "the reply event");
  await events.close();
  const streamed = events.events
    .filter((event) => event.data.type === "text_delta")
    .map((event) => String(event.data.text))
    .join("");
  return { ids, messages, streamed };
}

it("stores every answer of a steered rudder turn, linked to each message", async () => {
  const api = await fakeApi({
    // biome-ignore lint/suspicious/noThenProperty: the fake API names its delayed step so
    script: [{ delayMs: 1500, then: { text: "answer to alpha." } }],
    fallback: (request) => ({ text: `answer to ${plainLastUser(request)}.` }),
  });
  const workspace = folder("rudder");
  const gateway = await startRudderGateway({ prefix: "steered", apiUrl: api.url, workspace });
  cleanups.push(() => gateway.cleanup());
  const { ids, messages, streamed } = await steeredTurn(gateway, api, "alpha", ["beta", "gamma"]);

  const replies = messages.filter((message) => message.kind === "reply");
  expect(replies).toHaveLength(1);
  expect(replies[0]?.text).toBe("answer to alpha.\n\nanswer to beta gamma.");
  expect(replies[0]?.replyTo).toBe(ids[0]);
  expect((replies[0] as ApiMessage & { answers?: string[] }).answers).toEqual(ids);
  // What the live stream showed, word for word (the stored text adds only the paragraph break).
  expect(replies[0]?.text.replace(/\n\n/g, "")).toBe(streamed);
});

it("stores every answer of a Claude Code turn a message was folded into", async () => {
  const claudeBin = claudeCodeBinary();
  const api = await fakeApi({
    script: [
      {
        text: "answer to alpha.",
        toolUse: { name: "Bash", input: { command: "sleep 3", description: "wait" } },
      },
    ],
    fallback: () => ({ text: "answer to beta." }),
  });
  const home = folder("claude");
  const gateway = await startTestGateway({
    prefix: "steered-claude",
    engine: {
      claudeBin,
      cwd: home,
      args: ["--permission-mode", "bypassPermissions"],
      env: claudeCodeEnv(home, api.url),
    },
    permissionPrompts: false,
  });
  cleanups.push(() => gateway.cleanup());
  const { ids, messages, streamed } = await steeredTurn(gateway, api, "alpha", ["beta"]);

  const replies = messages.filter((message) => message.kind === "reply");
  expect(replies).toHaveLength(1);
  expect(replies[0]?.text).toBe("answer to alpha.\n\nanswer to beta.");
  // Folded in: the model's second call carried beta.
  expect(JSON.stringify(api.mainRequests()[1]?.body.messages)).toContain("beta");
  expect(replies[0]?.replyTo).toBe(ids[0]);
  expect((replies[0] as ApiMessage & { answers?: string[] }).answers).toEqual(ids);
  expect(replies[0]?.text.replace(/\n\n/g, "")).toBe(streamed);
}, 120_000);
