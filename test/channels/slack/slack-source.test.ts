/**
 * The Slack source against the fake Slack (a real HTTP and WebSocket server on 127.0.0.1 that
 * the official clients talk to unchanged), with the gateway's real event bus and permission
 * requests and a recording `deliver` in place of the router. One fake and one source for the
 * file: each case writes in its own channel.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memorySourceStore } from "../../../src/channels/kit/memory-source-store.js";
import { slackSignature } from "../../../src/channels/slack/slack-events-api.js";
import { SlackChannelSource } from "../../../src/channels/slack/slack-source.js";
import { PermissionRequests } from "../../../src/gateway/agents/permission-requests.js";
import { EventBus } from "../../../src/gateway/event-bus.js";
import type { GatewayEvent } from "../../../src/gateway/events.js";
import type { KnownChannel, SourceStore } from "../../../src/gateway/store/source-store.js";
import { type FakeSlack, startFakeSlack } from "../../helpers/fake-slack.js";
import { waitFor } from "../../helpers/wait-for.js";

const ADA = "U0ADA";
const STRANGER = "U0STRANGER";
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

let slack: FakeSlack;
let source: SlackChannelSource;
let bus: EventBus;
let permissions: PermissionRequests;
const closing = new AbortController();
const delivered: Array<{ channelId: string; text: string; meta: unknown }> = [];
/** Routing held for a message of this text until the gate opens (stored at once). */
const holds = new Map<string, Promise<void>>();
const routed: string[] = [];
/** The store both workers share (its claims), with the channels it has history of. */
const storeChannels: KnownChannel[] = [];
const base = memorySourceStore();
const shared: SourceStore = {
  ...base,
  deliveries: { ...base.deliveries, channels: async () => storeChannels },
};
/** A second worker: not holding the Socket Mode connection (another worker's lease). */
let other: SlackChannelSource;
const otherDelivered: Array<{ channelId: string; text: string }> = [];
const logs: string[] = [];

beforeAll(async () => {
  slack = await startFakeSlack({ pingIntervalMs: 1000 });
  bus = new EventBus();
  permissions = new PermissionRequests({ bus });
  source = new SlackChannelSource({
    botToken: slack.botToken,
    appToken: slack.appToken,
    apiUrl: slack.url,
    allow: [ADA],
    backoff: { initialMs: 20, maxMs: 200 },
    socketRetryMs: 1000,
    signingSecret: SECRET,
    logger: (line) => logs.push(line),
  });
  await source.start(
    async (channelId, text, meta, stored) => {
      delivered.push({ channelId, text, meta });
      if (!storeChannels.some((each) => each.channelId === channelId)) {
        storeChannels.push({ channelId, lastMessageAt: new Date().toISOString() });
      }
      const id = `message-${delivered.length}`;
      stored?.();
      await holds.get(text);
      routed.push(text);
      return { id, disposition: "started" };
    },
    {
      subscribe: (channelId, listener) =>
        bus.subscribe(
          channelId,
          (numbered) => listener(numbered.event),
          bus.replay(channelId).at(-1)?.id ?? 0,
        ),
      channelIds: async () => [],
      permissions,
      signal: closing.signal,
      store: shared,
    },
  );
  other = new SlackChannelSource({
    botToken: slack.botToken,
    appToken: slack.appToken,
    apiUrl: slack.url,
    allow: [ADA],
    signingSecret: SECRET,
  });
  await other.start(
    async (channelId, text, _meta, stored) => {
      otherDelivered.push({ channelId, text });
      stored?.();
      return { id: `other-${otherDelivered.length}`, disposition: "started" };
    },
    {
      subscribe: () => () => {},
      channelIds: async () => [],
      permissions,
      signal: closing.signal,
      store: shared,
      exclusive: (_name, _receive, signal) =>
        new Promise((resolve) => signal.addEventListener("abort", () => resolve())),
    },
  );
  await waitFor(
    () => logs.some((line) => line.includes("connected (Socket Mode)")),
    () => logs.join("\n"),
  );
});

afterAll(async () => {
  closing.abort();
  await other?.stop();
  await source?.stop();
  permissions?.close();
  await slack?.close();
});

function reply(channelId: string, text: string): void {
  bus.publish({
    type: "reply",
    channelId,
    message: {
      id: `reply-${Math.random()}`,
      channelId,
      role: "assistant",
      text,
      state: null,
      replyTo: null,
      kind: "reply",
      createdAt: new Date().toISOString(),
    },
  } as GatewayEvent);
}

const deliveredTo = (channelId: string) =>
  waitFor(
    () => delivered.find((each) => each.channelId === channelId),
    () =>
      `a delivery to ${channelId}: ${JSON.stringify(delivered)}\n${logs.join("\n")}\n${JSON.stringify(slack.calls.slice(-5))}`,
  );

const botSaid = (channel: string, threadTs: string, pattern: RegExp) =>
  waitFor(
    () => slack.botMessages(channel, threadTs).find((message) => pattern.test(message.text)),
    () =>
      `the bot to say ${pattern} in ${channel}/${threadTs}: ${JSON.stringify(slack.botMessages(channel, threadTs).map((m) => m.text))}`,
  );

describe("Slack source", () => {
  it("takes a mention as a conversation in its thread: eyes, the answer in mrkdwn, then a check", async () => {
    const said = slack.say({
      user: ADA,
      channel: "C1",
      text: `<@${slack.botUserId}> what is **up**?`,
    });
    const channelId = `slack:${slack.teamId}:C1:${said.ts}`;
    const delivery = await deliveredTo(channelId);
    expect(delivery.text).toBe("what is **up**?");
    expect(delivery.meta).toMatchObject({
      source: "slack",
      userId: ADA,
      userName: `Person ${ADA} (@name-${ADA})`,
      // The page's name for it: the channel and the thread's first words.
      chatTitle: "#c1: what is **up**?",
    });
    await waitFor(() => said.reactions.has("eyes"), "the eyes reaction");
    reply(channelId, "All **fine**, see [docs](https://example.com/a) & `x<y`");
    const answer = await botSaid("C1", said.ts, /All/);
    expect(answer.text).toBe("All *fine*, see <https://example.com/a|docs> &amp; `x&lt;y`");
    await waitFor(
      () => said.reactions.has("white_check_mark") && !said.reactions.has("eyes"),
      "the check mark",
    );
    expect(slack.unacked()).toEqual([]);
  });

  it("ignores channel talk without a mention, but follows replies in its own threads", async () => {
    const before = delivered.length;
    const idle = slack.say({ user: ADA, channel: "C2", text: "just chatting" });
    const started = slack.say({ user: ADA, channel: "C2", text: `<@${slack.botUserId}> start` });
    const channelId = `slack:${slack.teamId}:C2:${started.ts}`;
    await deliveredTo(channelId);
    slack.say({ user: ADA, channel: "C2", text: "and more", threadTs: started.ts });
    await waitFor(() => delivered.some((each) => each.text === "and more"), "the thread reply");
    expect(delivered.slice(before).map((each) => [each.channelId, each.text])).toEqual([
      [channelId, "start"],
      [channelId, "and more"],
    ]);
    expect(idle.reactions.size).toBe(0);
  });

  it("takes any DM message, and answers a stranger only in a DM (pairing)", async () => {
    const dm = slack.say({ user: ADA, channel: "D1", text: "hello in private" });
    const taken = await deliveredTo(`slack:${slack.teamId}:D1:${dm.ts}`);
    expect(taken.meta).toMatchObject({
      chatTitle: `Person ${ADA} (@name-${ADA}): hello in private`,
    });
    slack.say({ user: STRANGER, channel: "C3", text: `<@${slack.botUserId}> let me in` });
    const knock = slack.say({ user: STRANGER, channel: "D2", text: "let me in" });
    await botSaid("D2", knock.ts, /pair/i);
    expect(slack.messages.filter((message) => message.botId && message.channel === "C3")).toEqual(
      [],
    );
    expect(delivered.some((each) => each.text.includes("let me in"))).toBe(false);
  });

  it("asks with Block Kit buttons: a stranger refused, Ada's press decides and the card says so", async () => {
    const said = slack.say({ user: ADA, channel: "C4", text: `<@${slack.botUserId}> clean up` });
    const channelId = `slack:${slack.teamId}:C4:${said.ts}`;
    await deliveredTo(channelId);
    const decision = permissions.ask(channelId, {
      requestId: "r1",
      toolName: "bash",
      input: { command: "rm old.log" },
      toolUseId: undefined,
      raw: {},
    });
    const card = await botSaid("C4", said.ts, /rm old\.log/);
    const buttons = card.blocks?.find((block) => block.type === "actions")?.elements ?? [];
    expect(buttons.map((button: { text: { text: string } }) => button.text.text)).toHaveLength(3);
    const allowOnce = String(buttons[0].value);
    const ephemerals = () => slack.calls.filter((call) => call.method === "chat.postEphemeral");
    slack.press({ user: STRANGER, channel: "C4", ts: card.ts, value: allowOnce });
    await waitFor(() => ephemerals().length > 0, "the stranger's refusal");
    expect(ephemerals()[0]?.body).toMatchObject({ user: STRANGER, channel: "C4" });
    slack.press({ user: ADA, channel: "C4", ts: card.ts, value: allowOnce });
    expect(await decision).toEqual({ behavior: "allow" });
    await waitFor(
      () => /allowed once/i.test(card.text),
      () => `the card edited: ${card.text}`,
    );
    expect(card.blocks?.some((block) => block.type === "actions")).toBe(false);
  });

  it("runs a slash command on the newest thread the store knows in its channel, or on the thread its text links, and says so where there is none", async () => {
    const first = slack.say({ user: ADA, channel: "C5", text: `<@${slack.botUserId}> hi` });
    await deliveredTo(`slack:${slack.teamId}:C5:${first.ts}`);
    const said = slack.say({ user: ADA, channel: "C5", text: `<@${slack.botUserId}> again` });
    await deliveredTo(`slack:${slack.teamId}:C5:${said.ts}`);
    slack.slash({ user: ADA, channel: "C5", command: "/help" });
    await botSaid("C5", said.ts, /\/status/);
    const link = `<https://fake.slack.com/archives/C5/p${first.ts.replace(".", "")}>`;
    slack.slash({ user: ADA, channel: "C5", command: "/help", text: link });
    await botSaid("C5", first.ts, /\/status/);
    const elsewhere = slack.slash({
      user: ADA,
      channel: "C5",
      command: "/status",
      text: `https://fake.slack.com/archives/C6/p${first.ts.replace(".", "")}`,
    });
    const refused = await waitFor(
      () => slack.acks.find((each) => each.envelopeId === elsewhere),
      "the ack",
    );
    expect(refused.payload.text).toMatch(/another channel/);
    const envelope = slack.slash({ user: ADA, channel: "C6", command: "/status" });
    const ack = await waitFor(
      () => slack.acks.find((each) => each.envelopeId === envelope),
      "the ack",
    );
    expect(ack.payload.text).toMatch(/No conversation here yet/);
  });

  it("uploads a file into the thread with files.uploadV2, its caption as the comment", async () => {
    const said = slack.say({ user: ADA, channel: "C15", text: `<@${slack.botUserId}> a file?` });
    const channelId = `slack:${slack.teamId}:C15:${said.ts}`;
    await deliveredTo(channelId);
    const id = await source.platform.sendFile(
      channelId,
      {
        name: "report.txt",
        mediaType: "text/plain",
        data: Buffer.from("the report's own bytes"),
        caption: "Here is **the** report",
      },
      AbortSignal.timeout(10_000),
    );
    const upload = slack.uploads.get(id) ?? expect.fail(`no upload ${id}`);
    expect(upload).toMatchObject({
      filename: "report.txt",
      channel: "C15",
      threadTs: said.ts,
      initialComment: "Here is *the* report",
    });
    expect(upload.body?.includes("the report's own bytes")).toBe(true);
    expect(slack.calls.map((call) => call.method)).toEqual(
      expect.arrayContaining(["files.getUploadURLExternal", "files.completeUploadExternal"]),
    );
  });

  it("waits out a 429's Retry-After and sends the answer once", async () => {
    const said = slack.say({ user: ADA, channel: "C7", text: `<@${slack.botUserId}> slow` });
    const channelId = `slack:${slack.teamId}:C7:${said.ts}`;
    await deliveredTo(channelId);
    slack.failNext("chat.postMessage", { status: 429, retryAfter: 1 });
    const asked = Date.now();
    reply(channelId, "after the wait");
    await botSaid("C7", said.ts, /after the wait/);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(950);
    expect(
      slack.botMessages("C7", said.ts).filter((message) => message.text === "after the wait"),
    ).toHaveLength(1);
  });

  it("connects again after the socket drops and takes what is said next", async () => {
    const hellos = slack.helloCount();
    slack.dropSockets();
    await waitFor(
      () => slack.helloCount() > hellos && slack.connections() > 0,
      "the new connection",
    );
    const said = slack.say({ user: ADA, channel: "C8", text: `<@${slack.botUserId}> back?` });
    await deliveredTo(`slack:${slack.teamId}:C8:${said.ts}`);
    expect(logs.some((line) => line.includes("connected again"))).toBe(true);
  });

  it("acknowledges a message once it is stored, while its routing is held, and takes the next meanwhile", async () => {
    let release = () => {};
    holds.set(
      "held",
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    const acked = (envelope: string | undefined) => () =>
      slack.acks.some((ack) => ack.envelopeId === envelope);
    const said = slack.say({ user: ADA, channel: "C12", text: `<@${slack.botUserId}> held` });
    await waitFor(acked(said.envelopeId), "the ack while its routing is held");
    const next = slack.say({ user: ADA, channel: "C12", text: "behind it", threadTs: said.ts });
    await waitFor(acked(next.envelopeId), "the next message acknowledged meanwhile");
    await waitFor(() => routed.includes("behind it"), "the next message routed meanwhile");
    expect(routed).not.toContain("held");
    release();
    await waitFor(() => routed.includes("held"), "the held routing ended");
  });

  it("takes an event Slack sends again (its ack lost) once", async () => {
    const said = slack.say({ user: ADA, channel: "C9", text: `<@${slack.botUserId}> once` });
    const channelId = `slack:${slack.teamId}:C9:${said.ts}`;
    await deliveredTo(channelId);
    const envelope = said.envelopeId ?? "";
    await waitFor(() => slack.acks.some((ack) => ack.envelopeId === envelope), "the ack");
    slack.redeliver(envelope);
    const after = slack.say({ user: ADA, channel: "C9", text: "then this", threadTs: said.ts });
    await waitFor(() => delivered.some((each) => each.text === "then this"), "the next message");
    expect(
      delivered.filter((each) => each.channelId === channelId).map((each) => each.text),
    ).toEqual(["once", "then this"]);
    expect(after.ts > said.ts).toBe(true);
    // Each ack is sent as its envelope is stored (or found a repeat), before routing, and reaches
    // the fake a moment later over its socket: every envelope, the repeat included, gets one.
    await waitFor(
      () => slack.unacked().length === 0,
      () => `every envelope acknowledged: ${JSON.stringify(slack.unacked())}`,
    );
  });

  describe("the Events API over HTTP", () => {
    const post = (body: string, options: { type?: string; secret?: string; at?: number } = {}) => {
      const timestamp = String(Math.floor((options.at ?? Date.now()) / 1000));
      return new Request("http://127.0.0.1/slack/events", {
        method: "POST",
        headers: {
          "content-type": options.type ?? "application/json",
          "x-slack-request-timestamp": timestamp,
          "x-slack-signature": slackSignature(options.secret ?? SECRET, timestamp, body),
        },
        body,
      });
    };
    const webhook = () => source.webhook ?? expect.fail("no webhook");

    it("answers url_verification with its challenge", async () => {
      const response = await webhook().handle(
        post(JSON.stringify({ type: "url_verification", challenge: "abc" })),
      );
      expect(await response.json()).toEqual({ challenge: "abc" });
    });

    it("refuses a bad signature, a stale timestamp and a replay", async () => {
      const body = JSON.stringify({ type: "url_verification", challenge: "x" });
      expect((await webhook().handle(post(body, { secret: "wrong" }))).status).toBe(401);
      expect((await webhook().handle(post(body, { at: Date.now() - 6 * 60_000 }))).status).toBe(
        401,
      );
      const first = post(body);
      const again = first.clone();
      expect((await webhook().handle(first)).status).toBe(200);
      const replay = await webhook().handle(again);
      expect(replay.status).toBe(401);
      expect(await replay.json()).toEqual({ error: "the request was sent before (a replay)" });
    });

    it("takes a signed event at once and delivers it off the request's path", async () => {
      const ts = `${Math.floor(Date.now() / 1000)}.999001`;
      const event = {
        type: "event_callback",
        team_id: slack.teamId,
        event: {
          type: "message",
          channel: "C10",
          channel_type: "channel",
          user: ADA,
          text: `<@${slack.botUserId}> over http`,
          ts,
          team: slack.teamId,
        },
      };
      const started = performance.now();
      const response = await webhook().handle(post(JSON.stringify(event)));
      expect(response.status).toBe(200);
      expect(performance.now() - started).toBeLessThan(3000);
      await deliveredTo(`slack:${slack.teamId}:C10:${ts}`);
    });

    it("is taken by a worker not holding the connection; the same event to another worker is dropped", async () => {
      const ts = `${Math.floor(Date.now() / 1000)}.999002`;
      const event = JSON.stringify({
        type: "event_callback",
        team_id: slack.teamId,
        event: {
          type: "message",
          channel: "C13",
          channel_type: "channel",
          user: ADA,
          text: `<@${slack.botUserId}> to any worker`,
          ts,
          team: slack.teamId,
        },
      });
      const taken = await (other.webhook ?? expect.fail("no webhook")).handle(post(event));
      expect(taken.status).toBe(200);
      const channelId = `slack:${slack.teamId}:C13:${ts}`;
      expect(otherDelivered).toContainEqual({ channelId, text: "to any worker" });
      // Slack's retry (the first answer lost) reaches the worker holding the connection.
      const retry = post(event);
      retry.headers.set("x-slack-retry-num", "1");
      expect((await webhook().handle(retry)).status).toBe(200);
      await waitFor(
        () => logs.some((line) => line.includes(`C13:${ts} was delivered before`)),
        "the retry dropped",
      );
      expect(delivered.some((each) => each.channelId === channelId)).toBe(false);
    });

    it("takes a reply without a mention in a thread only the store knows", async () => {
      const root = `${Math.floor(Date.now() / 1000) - 60}.000100`;
      const channelId = `slack:${slack.teamId}:C14:${root}`;
      storeChannels.push({ channelId, lastMessageAt: new Date().toISOString() });
      const event = JSON.stringify({
        type: "event_callback",
        team_id: slack.teamId,
        event: {
          type: "message",
          channel: "C14",
          channel_type: "channel",
          user: ADA,
          text: "no mention needed here",
          ts: `${Math.floor(Date.now() / 1000)}.999003`,
          thread_ts: root,
          team: slack.teamId,
        },
      });
      const taken = await (other.webhook ?? expect.fail("no webhook")).handle(post(event));
      expect(taken.status).toBe(200);
      expect(otherDelivered).toContainEqual({ channelId, text: "no mention needed here" });
      // A slash command there, through this worker, acts on that thread too.
      const form = new URLSearchParams({ command: "/help", channel_id: "C14", user_id: ADA });
      const slashed = await (other.webhook ?? expect.fail("no webhook")).handle(
        post(form.toString(), { type: "application/x-www-form-urlencoded" }),
      );
      expect(slashed.status).toBe(200);
      await botSaid("C14", root, /\/status/);
    });

    it("says privately that a slash command needs a conversation first", async () => {
      const form = new URLSearchParams({
        command: "/status",
        channel_id: "C11",
        user_id: ADA,
        text: "",
      });
      const response = await webhook().handle(
        post(form.toString(), { type: "application/x-www-form-urlencoded" }),
      );
      expect(await response.json()).toMatchObject({ response_type: "ephemeral" });
    });
  });

  it("never logs a token", () => {
    const all = logs.join("\n");
    expect(all).not.toContain(slack.botToken);
    expect(all).not.toContain(slack.appToken);
  });
});
