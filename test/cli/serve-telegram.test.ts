/**
 * The built `rudder serve` with Telegram on: its agents talk to the fake
 * Messages API, its Telegram source to the fake Bot API. An allowed user's
 * message reaches an agent and the reply comes back with sendMessage; a
 * stranger is refused; a permission request is allowed from the chat.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chatGatewayRoot,
  serveEnv,
  toolSaid,
  writeTokenFile,
} from "../helpers/chat-gateway-fixture.js";
import {
  echoFallback,
  type FakeMessagesApi,
  lastUserText,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { type FakeTelegramApi, startFakeTelegramApi } from "../helpers/fake-telegram-api.js";
import { isAlive } from "../helpers/process-state.js";
import { type RudderRun, runRudder, startRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";

let root: string;
let messagesApi: FakeMessagesApi;
let telegram: FakeTelegramApi;
const servers: RudderRun[] = [];

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv =>
  serveEnv(root, messagesApi.url, { RUDDER_TELEGRAM_API_URL: telegram.url, ...extra });

function serve(name: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): RudderRun {
  const run = startRudder(["serve", "--port", "0", "--data", join(root, name), ...args], {
    cwd: join(root, "workspace"),
    env: env(extraEnv),
  });
  servers.push(run);
  return run;
}

async function stop(run: RudderRun): Promise<number | null> {
  run.child.kill("SIGTERM");
  const exited = await Promise.race([
    run.exited,
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000)),
  ]);
  run.kill();
  return exited?.code ?? null;
}

function gatewayUrl(run: RudderRun): string {
  return (/one-time link\): (\S+)/.exec(run.stdout())?.[1] ?? "").replace(/\/#code=.*/, "");
}

async function api<T>(run: RudderRun, data: string, path: string): Promise<T> {
  const token = readFileSync(join(root, data, "token"), "utf8").trim();
  const response = await fetch(`${gatewayUrl(run)}${path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return (await response.json()) as T;
}

const sentTo = (chatId: string, text: string) =>
  waitFor(
    () => telegram.sent.find((message) => message.chatId === chatId && message.text.includes(text)),
    `a Telegram message to ${chatId} containing "${text}"`,
    30_000,
  );

beforeAll(async () => {
  // The user asks about rm (in the sandbox, only ask rules and the deny list stop a command).
  root = chatGatewayRoot("rudder-serve-telegram-");
  messagesApi = await startFakeMessagesApi({
    fallback: (request) => toolSaid(request) ?? echoFallback(request),
  });
  telegram = await startFakeTelegramApi();
  writeTokenFile(join(root, "bot-token"), telegram.token);
});

afterAll(async () => {
  for (const run of servers) await stop(run);
  await telegram?.close();
  await messagesApi?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("rudder serve with Telegram", () => {
  let server: RudderRun;

  beforeAll(async () => {
    server = serve("data", [
      "--telegram-token-file",
      join(root, "bot-token"),
      "--telegram-allow",
      "111",
    ]);
    await waitFor(
      () => /one-time link/.test(server.stdout()) && /polling as @/.test(server.stderr()),
      "the gateway listening and polling Telegram",
      30_000,
    );
  });

  it("takes an allowed user's message to an agent and sends its reply back", async () => {
    telegram.pushMessage({ userId: 111, text: "hello from telegram" });
    // The gateway fences a channel's text as external content; the fake model echoes it.
    const reply = await sentTo("111", "hello from telegram");
    expect(reply.text).toMatch(/^echo: /);
    expect(reply.parseMode).toBeUndefined();
    const { messages } = await api<{ messages: Array<{ kind: string; source?: string }> }>(
      server,
      "data",
      "/api/channels/telegram:111/messages",
    );
    expect(messages.map((message) => message.kind)).toEqual(["user", "reply"]);
    expect(existsSync(join(root, "data", "telegram-4242.offset"))).toBe(true);
  });

  it("refuses a stranger with their id, and nothing reaches an agent", async () => {
    const asked = messagesApi.mainRequests().length;
    telegram.pushMessage({ userId: 222, text: "let me in" });
    const refusal = await sentTo("222", "Not allowed");
    expect(refusal.text).toContain("222");
    telegram.pushMessage({ userId: 111, text: "still here" });
    await sentTo("111", "still here");
    expect(
      messagesApi
        .mainRequests()
        .slice(asked)
        .some((request) => lastUserText(request).includes("let me in")),
    ).toBe(false);
    const { channels } = await api<{ channels: Array<{ id: string }> }>(
      server,
      "data",
      "/api/channels",
    );
    expect(channels.map((channel) => channel.id)).not.toContain("telegram:222");
  });

  it("announces a permission request in the chat and takes /allow from it", async () => {
    const doomed = join(root, "workspace", "gone.txt");
    writeFileSync(doomed, "bye");
    messagesApi.push({ toolUse: { name: "Bash", input: { command: "rm gone.txt" } } });
    telegram.pushMessage({ userId: 111, text: "delete gone.txt" });
    const announced = await waitFor(
      () =>
        telegram.sent.find(
          (message) => message.text.includes("rm gone.txt") && message.text.includes("/allow"),
        ),
      "the permission request's card",
      30_000,
    );
    const id = /\/allow (\S+)/.exec(announced.text)?.[1];
    expect(id).toBeDefined();
    telegram.pushMessage({ userId: 111, text: `/allow ${id}` });
    await sentTo("111", `${id}: allowed`);
    await sentTo("111", "tool said");
    expect(existsSync(doomed)).toBe(false);
  });

  it("stops on SIGTERM, leaving no agent process, never printing the token", async () => {
    const { runners } = await api<{ runners: Array<{ pid: number | null }> }>(
      server,
      "data",
      "/api/runners",
    );
    const pids = runners.flatMap((runner) => (runner.pid === null ? [] : [runner.pid]));
    expect(pids.length).toBeGreaterThan(0);
    expect(await stop(server)).toBe(0);
    expect(pids.filter(isAlive)).toEqual([]);
    const secret = telegram.token.split(":")[1] ?? telegram.token;
    expect(`${server.stdout()}${server.stderr()}`).not.toContain(secret);
  });
});

describe("rudder serve's Telegram configuration", () => {
  it("starts in pairing mode without an allow-list: from a code to the first answer", async () => {
    const run = serve("no-allow", ["--telegram-token-file", join(root, "bot-token")]);
    await waitFor(
      () => /one-time link/.test(run.stdout()) && /pairing mode/.test(run.stderr()),
      "the gateway polling in pairing mode",
      30_000,
    );
    telegram.pushMessage({ userId: 333, text: "hello, may I?" });
    const offer = await sentTo("333", "pairing code");
    const code = /pairing code: ([A-Z0-9]{8})/.exec(offer.text)?.[1] ?? "";
    expect(code).toMatch(/^[A-Z0-9]{8}$/);
    const url = gatewayUrl(run);
    const cliEnv = { env: env(), cwd: root };
    const listed = await runRudder(
      ["pairing", "list", "--url", url, "--data", join(root, "no-allow")],
      cliEnv,
    );
    expect(listed.stdout).toContain(code);
    const approved = await runRudder(
      ["pairing", "approve", "telegram", code, "--url", url, "--data", join(root, "no-allow")],
      cliEnv,
    );
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain("user 333");
    telegram.pushMessage({ userId: 333, text: "now let me in" });
    const answer = await sentTo("333", "now let me in");
    expect(answer.text).toMatch(/^echo: /);
    await stop(run);
  });

  it("keeps the gateway running when the Bot API rejects the token", async () => {
    writeFileSync(join(root, "wrong-token"), "1:wrong-secret-token\n");
    const run = serve("bad-token", ["--telegram-token-file", join(root, "wrong-token")], {
      RUDDER_TELEGRAM_ALLOW: "111",
    });
    await waitFor(() => /rejected the bot token/.test(run.stderr()), "the token rejected", 30_000);
    const lines = run.stderr().split("\n");
    expect(lines.filter((line) => line.includes("telegram"))).toHaveLength(1);
    expect(run.stderr()).not.toContain("wrong-secret-token");
    await waitFor(() => /one-time link/.test(run.stdout()), "the gateway listening");
    const health = await (await fetch(`${gatewayUrl(run)}/api/health`)).json();
    expect(health).toMatchObject({ ok: true });
    expect(await stop(run)).toBe(0);
  });
});
