/**
 * Discord end to end: the built `rudder serve` with its Discord source on the fake Discord
 * (discord.js unchanged, REST and gateway on loopback) and its agents on the fake Messages API.
 * A mention opens a thread on it where the answer goes and the talk goes on without mentions;
 * a DM is answered in the DM; a long answer is cut under 2,000 characters; a 429 is waited out
 * for its `retry_after`; a message arriving while the agent works gets a reaction; slash
 * commands are registered in the guild and answered; a permission card's buttons refuse a
 * stranger and let the allowed person decide; after a dropped connection or a reconnect
 * request (op 7) the session resumes and what is said after it is answered, after an invalid
 * session (op 9) a new one reads back what was said between; a file the agent sends (`send_file`) goes into the
 * thread. One gateway serves the cases; two run the real Claude Code CLI (`--engine claude`),
 * one of them sending a file through rudder's MCP tool (`mcp__rudder__send_file`).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chatGatewayRoot,
  serveEnv,
  toolSaid,
  writeTokenFile,
} from "../../helpers/chat-gateway-fixture.js";
import { claudeCodeEnv } from "../../helpers/claude-code-env.js";
import { type FakeDiscord, startFakeDiscord } from "../../helpers/fake-discord.js";
import {
  echoFallback,
  type FakeMessagesApi,
  startFakeMessagesApi,
} from "../../helpers/fake-messages-api.js";
import { type RudderRun, startRudder, stopRudder } from "../../helpers/rudder-cli.js";
import { waitFor } from "../../helpers/wait-for.js";

const ADA = "111111111111111111";
const BEN = "222222222222222222";
const STRANGER = "999999999999999999";

let root: string;
let messagesApi: FakeMessagesApi;
let discord: FakeDiscord;
const servers: RudderRun[] = [];

function serve(data: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}): RudderRun {
  const run = startRudder(
    [
      "serve",
      "--port",
      "0",
      "--data",
      join(root, data),
      "--discord-token-file",
      join(root, "bot-token"),
      "--discord-allow",
      `${ADA},${BEN}`,
      ...extra,
    ],
    {
      cwd: join(root, "workspace"),
      env: serveEnv(root, messagesApi.url, { RUDDER_DISCORD_API_URL: discord.apiUrl, ...env }),
    },
  );
  servers.push(run);
  return run;
}

async function connected(run: RudderRun): Promise<void> {
  await waitFor(
    () => /one-time link/.test(run.stdout()) && /connected as @rudder/.test(run.stderr()),
    () => `the gateway connected to Discord; stderr: ${run.stderr()}`,
    30_000,
  );
}

const find = (channelId: string, pattern: RegExp) =>
  discord.sent.find((message) => message.channelId === channelId && pattern.test(message.text));

const sentTo = (channelId: string, pattern: RegExp, what = String(pattern)) =>
  waitFor(
    () => find(channelId, pattern),
    () =>
      `a message to ${channelId}: ${what}; stderr: ${servers.map((run) => run.stderr()).join("\n")}`,
    30_000,
  );

beforeAll(async () => {
  root = chatGatewayRoot("rudder-discord-");
  messagesApi = await startFakeMessagesApi({
    fallback: (request) => {
      const said = toolSaid(request);
      if (said) return said;
      const echoed = echoFallback(request);
      // rudder's agents have send_file built in; Claude Code's reach it through rudder's MCP server.
      const sending = /send the report by (\w+)/.exec(JSON.stringify(echoed))?.[1];
      if (sending) {
        const name = sending === "mcp" ? "mcp__rudder__send_file" : "send_file";
        return { toolUse: { name, input: { path: "report.txt", caption: "the **report**" } } };
      }
      return /make it long/.test(JSON.stringify(echoed))
        ? { text: `${"long line of words\n".repeat(250)}the end` }
        : echoed;
    },
  });
  discord = await startFakeDiscord();
  writeTokenFile(join(root, "bot-token"), discord.token);
});

afterAll(async () => {
  for (const run of servers) await stopRudder(run);
  await discord?.close();
  await messagesApi?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("rudder serve on Discord (rudder engine)", () => {
  let server: RudderRun;

  beforeAll(async () => {
    server = serve("data");
    await connected(server);
  });

  // One bot, one connection: the next describe's gateway takes over.
  afterAll(() => stopRudder(server));

  it("registers the slash commands in the guild and answers one", async () => {
    await waitFor(() => discord.commands.get(discord.guildId), "guild commands registered");
    expect(discord.commands.get(discord.guildId)?.map((command) => command.name)).toEqual([
      "status",
      "stop",
      "compact",
      "clear",
      "model",
      "help",
    ]);
    const dm = discord.dm(ADA);
    const id = discord.slash({ userId: ADA, channelId: dm, name: "help" });
    await waitFor(() => discord.callbacks.get(id), "the interaction answered");
    expect(discord.callbacks.get(id)?.data?.content).toBe("/help");
    await sentTo(dm, /This chat talks to a coding agent/);
  });

  it("opens a thread on a mention and goes on there without one", async () => {
    const mention = discord.say({
      userId: ADA,
      channelId: discord.channelId,
      text: "hello from the channel",
      mention: true,
    });
    const answer = await sentTo(mention.id, /hello from the channel/);
    expect(discord.threadsStarted).toContain(mention.id);
    expect(answer.text).not.toContain(`<@${discord.botId}>`);
    discord.say({ userId: ADA, channelId: mention.id, text: "and a follow-up" });
    await sentTo(mention.id, /and a follow-up/);
    // Not addressed in the channel itself: nothing happens there.
    expect(discord.sent.filter((message) => message.channelId === discord.channelId)).toEqual([]);
  });

  it("ignores a stranger in the server and offers pairing in a DM", async () => {
    const ignored = discord.say({
      userId: STRANGER,
      channelId: discord.channelId,
      text: "let me in",
      mention: true,
    });
    const stranger = discord.dm(STRANGER);
    discord.say({ userId: STRANGER, channelId: stranger, text: "hello?" });
    await sentTo(stranger, /pairing code: [A-Z0-9]{8}/);
    // Taken in order: by the time the DM is answered the mention was passed over.
    expect(discord.sent.filter((message) => message.channelId === ignored.id)).toEqual([]);
    expect(discord.threadsStarted).not.toContain(ignored.id);
  });

  it("answers a DM in the DM, a long answer in parts under 2,000 characters", async () => {
    const dm = discord.dm(ADA);
    discord.say({ userId: ADA, channelId: dm, text: "make it long" });
    await sentTo(dm, /the end$/);
    const parts = discord.sent.filter(
      (message) => message.channelId === dm && /long line/.test(message.text),
    );
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) expect(part.text.length).toBeLessThanOrEqual(2000);
  });

  it("sends into the thread a file the agent sends with send_file", async () => {
    writeFileSync(join(root, "workspace", "report.txt"), "the report's own bytes");
    const mention = discord.say({
      userId: ADA,
      channelId: discord.channelId,
      text: "send the report by send_file",
      mention: true,
    });
    const withFile = await waitFor(
      () => discord.sent.find((m) => m.channelId === mention.id && m.files.length > 0),
      () => `a file in the thread; stderr: ${servers.map((run) => run.stderr()).join("\n")}`,
      30_000,
    );
    expect(withFile.files.map((file) => [file.name, file.data.toString()])).toEqual([
      ["report.txt", "the report's own bytes"],
    ]);
    expect(withFile.text).toBe("the **report**");
  });

  it("waits out a 429 for its retry_after", async () => {
    const dm = discord.dm(ADA);
    discord.failNext(/POST \/channels\/\d+\/messages$/, { status: 429, retryAfterSeconds: 1 }, 1);
    discord.say({ userId: ADA, channelId: dm, text: "rate limited hello" });
    const limited = discord.calls.length;
    const answer = await sentTo(dm, /rate limited hello/);
    const tries = discord.calls
      .slice(limited)
      .filter((call) => call.method === "POST" && call.path.endsWith("/messages"));
    expect(tries.length).toBeGreaterThanOrEqual(2);
    const [first, second] = tries;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(900);
    expect(answer.text).toContain("rate limited hello");
  });

  it("asks with buttons: a stranger's press refused, Allow once runs it, the card says who", async () => {
    const doomed = join(root, "workspace", "doomed.txt");
    writeFileSync(doomed, "bye");
    messagesApi.push({ toolUse: { name: "Bash", input: { command: "rm doomed.txt" } } });
    const mention = discord.say({
      userId: ADA,
      channelId: discord.channelId,
      text: "delete doomed.txt",
      mention: true,
    });
    const card = await sentTo(mention.id, /Permission request .*\n.*rm doomed\.txt/);
    expect(card.buttons.flat().map((data) => data.slice(0, 3))).toEqual(["pa:", "pA:", "pd:"]);
    const allowOnce = card.buttons[0]?.[0] ?? "";
    const refused = discord.press({ userId: STRANGER, messageId: card.id, customId: allowOnce });
    await waitFor(() => discord.callbacks.get(refused), "the stranger's press answered");
    expect(discord.callbacks.get(refused)?.data?.content).toMatch(/only people allowed/i);
    expect(discord.callbacks.get(refused)?.data?.flags).toBe(64);
    expect(existsSync(doomed)).toBe(true);
    const pressed = discord.press({ userId: ADA, messageId: card.id, customId: allowOnce });
    await sentTo(mention.id, /tool said/);
    expect(discord.callbacks.get(pressed)?.type).toBe(6);
    expect(existsSync(doomed)).toBe(false);
    await waitFor(() => /allowed once by/.test(card.text), "the card edited with the decision");
    expect(card.buttons).toEqual([]);
  });

  it("reacts to a message that joins the running turn", async () => {
    messagesApi.push({ toolUse: { name: "Bash", input: { command: "sleep 1.5; echo slow" } } });
    const dm = discord.dm(ADA);
    discord.say({ userId: ADA, channelId: dm, text: "start something slow" });
    await sentTo(dm, /sleep 1\.5/, "the status message");
    const joining = discord.say({ userId: ADA, channelId: dm, text: "and this too" });
    await waitFor(
      () => discord.reactions.find((reaction) => reaction.messageId === joining.id),
      "a reaction on the joining message",
    );
    expect(find(dm, /Added to what the agent is doing/)).toBeUndefined();
  });

  it("resumes after a dropped connection and answers what is said after it", async () => {
    const resumes = discord.gateway.resumes;
    discord.gateway.drop();
    await waitFor(() => discord.gateway.resumes > resumes, "a RESUME");
    const mention = discord.say({
      userId: ADA,
      channelId: discord.channelId,
      text: "after the resume",
      mention: true,
    });
    await sentTo(mention.id, /after the resume/);
    expect(discord.gateway.identifies).toBe(1);
    expect(server.stdout() + server.stderr()).not.toContain(discord.token);
  });

  it("resumes on a reconnect request; after an invalid session reads back what was said between", async () => {
    const resumes = discord.gateway.resumes;
    discord.gateway.reconnect();
    await waitFor(() => discord.gateway.resumes > resumes, "a RESUME after op 7");
    const dm = discord.dm(BEN);
    discord.say({ userId: BEN, channelId: dm, text: "before the invalid session" });
    await sentTo(dm, /before the invalid session/);
    const identifies = discord.gateway.identifies;
    discord.gateway.invalidate();
    // No session hears it: only the catch-up of the new session reads it back.
    discord.say({ userId: BEN, channelId: dm, text: "between the sessions" });
    await waitFor(() => discord.gateway.identifies > identifies, "a new IDENTIFY after op 9");
    await sentTo(dm, /between the sessions/);
  });

  it("answers once what was said in its threads and DMs while it was down", async () => {
    const thread = discord.say({
      userId: ADA,
      channelId: discord.channelId,
      text: "a thread to come back to",
      mention: true,
    });
    await sentTo(thread.id, /a thread to come back to/);
    const dm = discord.dm(BEN);
    discord.say({ userId: BEN, channelId: dm, text: "a DM to come back to" });
    await sentTo(dm, /a DM to come back to/);
    await stopRudder(server);
    discord.say({ userId: ADA, channelId: thread.id, text: "said in the thread meanwhile" });
    discord.say({ userId: BEN, channelId: dm, text: "said in the DM meanwhile" });
    server = serve("data");
    await connected(server);
    await sentTo(thread.id, /said in the thread meanwhile/);
    await sentTo(dm, /said in the DM meanwhile/);
    // Something said after the catch-up is answered after it: nothing of it is still to come.
    const later = discord.say({
      userId: ADA,
      channelId: thread.id,
      text: "after the catch-up",
    });
    await sentTo(thread.id, /after the catch-up/);
    for (const said of [/said in the thread meanwhile/, /said in the DM meanwhile/]) {
      expect(discord.sent.filter((message) => said.test(message.text))).toHaveLength(1);
    }
    expect(later.id).not.toBe("");
    // Both said meanwhile were read back; a message read back that was answered before the stop
    // (its time at the edge of the last stored one) is dropped by its delivery key, not answered.
    const caught = /caught up: (\d+) message/.exec(server.stderr());
    expect(Number(caught?.[1])).toBeGreaterThanOrEqual(2);
  });
});

describe("rudder serve on Discord (Claude Code engine)", () => {
  let run: RudderRun;

  beforeAll(async () => {
    const claudeBin = execFileSync(
      "bash",
      [resolve("scripts", "install-claude-code.sh"), "--print-path"],
      { encoding: "utf8" },
    ).trim();
    const home = join(root, "claude-home");
    mkdirSync(home, { recursive: true });
    run = serve("claude-data", ["--engine", "claude", "--no-permission-prompts"], {
      ...claudeCodeEnv(home, messagesApi.url),
      RUDDER_CLAUDE_BIN: claudeBin,
      RUDDER_DISCORD_API_URL: discord.apiUrl,
    });
    await connected(run);
  }, 60_000);

  let thread = "";

  it("answers a mention in its thread", async () => {
    thread = discord.say({
      userId: ADA,
      channelId: discord.channelId,
      text: "hello claude code",
      mention: true,
    }).id;
    await sentTo(thread, /hello claude code/);
  }, 60_000);

  // In the same thread: its agent process runs already (a new one costs Claude Code's start).
  it("sends into the thread a file the agent sends with rudder's MCP tool", async () => {
    writeFileSync(join(root, "workspace", "report.txt"), "the report's own bytes");
    discord.say({ userId: ADA, channelId: thread, text: "send the report by mcp" });
    const withFile = await waitFor(
      () => discord.sent.find((m) => m.channelId === thread && m.files.length > 0),
      () =>
        `a file in the thread; sent there: ${JSON.stringify(discord.sent.filter((m) => m.channelId === thread).map((m) => m.text))}; stderr: ${run.stderr()}`,
      30_000,
    );
    expect(withFile.files.map((file) => file.name)).toEqual(["report.txt"]);
  }, 60_000);
});
