/**
 * The chat kit end to end: the built `rudder serve` with its Telegram source on the fake Bot
 * API and its agents on the fake Messages API. Permission requests are cards whose buttons
 * allow and deny (and refuse a stranger's press); a turn's steps show in one status message
 * edited within Telegram's limits; a reply whose delivery was cut by a SIGKILL is sent once
 * after the restart, marked "may repeat" in the ledger.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chatGatewayRoot,
  serveEnv,
  toolSaid,
  writeTokenFile,
} from "../../helpers/chat-gateway-fixture.js";
import {
  echoFallback,
  type FakeMessagesApi,
  startFakeMessagesApi,
} from "../../helpers/fake-messages-api.js";
import { type FakeTelegramApi, startFakeTelegramApi } from "../../helpers/fake-telegram-api.js";
import { type RudderRun, startRudder, stopRudder } from "../../helpers/rudder-cli.js";
import { waitFor } from "../../helpers/wait-for.js";

let root: string;
let messagesApi: FakeMessagesApi;
let telegram: FakeTelegramApi;
const servers: RudderRun[] = [];

function serve(data: string, env: Record<string, string> = {}): RudderRun {
  const run = startRudder(
    [
      "serve",
      "--port",
      "0",
      "--data",
      join(root, data),
      "--telegram-token-file",
      join(root, "bot-token"),
      "--telegram-allow",
      "111",
    ],
    {
      cwd: join(root, "workspace"),
      env: serveEnv(root, messagesApi.url, { RUDDER_TELEGRAM_API_URL: telegram.url, ...env }),
    },
  );
  servers.push(run);
  return run;
}

async function polling(run: RudderRun): Promise<void> {
  await waitFor(
    () => /one-time link/.test(run.stdout()) && /polling as @/.test(run.stderr()),
    "the gateway listening and polling Telegram",
    30_000,
  );
}

const find = (chatId: string, pattern: RegExp) =>
  telegram.sent.find((message) => message.chatId === chatId && pattern.test(message.text));

const sentTo = (chatId: string, pattern: RegExp, what = String(pattern)) =>
  waitFor(() => find(chatId, pattern), `a message to ${chatId}: ${what}`, 30_000);

beforeAll(async () => {
  root = chatGatewayRoot("rudder-telegram-kit-");
  messagesApi = await startFakeMessagesApi({
    fallback: (request) => toolSaid(request) ?? echoFallback(request),
  });
  telegram = await startFakeTelegramApi();
  writeTokenFile(join(root, "bot-token"), telegram.token);
});

afterAll(async () => {
  for (const run of servers) await stopRudder(run);
  await telegram?.close();
  await messagesApi?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("the chat kit on Telegram, through the gateway", () => {
  let server: RudderRun;

  beforeAll(async () => {
    server = serve("data");
    await polling(server);
  });

  it("publishes the command menu", async () => {
    await waitFor(() => telegram.commands().length > 0, "setMyCommands");
    expect(telegram.commands().map((command) => command.command)).toEqual([
      "status",
      "stop",
      "compact",
      "clear",
      "model",
      "help",
    ]);
  });

  it("asks with buttons: a stranger's press refused, Allow once runs it, the card says who", async () => {
    const doomed = join(root, "workspace", "allowed.txt");
    writeFileSync(doomed, "bye");
    messagesApi.push({ toolUse: { name: "Bash", input: { command: "rm allowed.txt" } } });
    // In a group, where a stranger can see the card too; the bot is addressed by its name.
    telegram.pushMessage({
      userId: 111,
      chatId: -500,
      text: "@rudder_test_bot delete allowed.txt",
    });
    const card = await sentTo("-500", /Permission request .*\n.*rm allowed\.txt/);
    expect(card.buttons.flat().map((data) => data.slice(0, 3))).toEqual(["pa:", "pA:", "pd:"]);
    const allowOnce = card.buttons[0]?.[0] ?? "";
    const stranger = telegram.pushPress({
      userId: 999,
      messageId: card.messageId,
      data: allowOnce,
    });
    const strangerPress = stranger.callback_query?.id ?? "";
    await waitFor(() => telegram.pressAnswers.has(strangerPress), "the stranger's press answered");
    expect(telegram.pressAnswers.get(strangerPress)).toMatch(/only people allowed/i);
    expect(existsSync(doomed)).toBe(true);
    telegram.pushPress({ userId: 111, messageId: card.messageId, data: allowOnce });
    await sentTo("-500", /tool said/);
    expect(existsSync(doomed)).toBe(false);
    await waitFor(() => /allowed once by user 111/.test(card.text), "the card edited");
    expect(card.buttons).toEqual([]);
  });

  it("denies with the Deny button, and with a reply that gives the reason", async () => {
    const kept = join(root, "workspace", "kept.txt");
    writeFileSync(kept, "stay");
    messagesApi.push({ toolUse: { name: "Bash", input: { command: "rm kept.txt" } } });
    telegram.pushMessage({ userId: 111, text: "delete kept.txt" });
    const card = await sentTo("111", /Permission request .*\n.*rm kept\.txt/);
    telegram.pushPress({
      userId: 111,
      messageId: card.messageId,
      data: card.buttons[1]?.[0] ?? "",
    });
    await waitFor(() => /denied by user 111/.test(card.text), "the card edited to denied");
    await sentTo("111", /tool said.*Denied by the person/);
    expect(existsSync(kept)).toBe(true);

    messagesApi.push({ toolUse: { name: "Bash", input: { command: "rm -r kept.txt" } } });
    telegram.pushMessage({ userId: 111, text: "delete kept.txt for real" });
    const second = await sentTo("111", /Permission request .*\n.*rm -r kept\.txt/);
    telegram.pushMessage({ userId: 111, text: "use the trash instead", replyTo: second.messageId });
    await waitFor(
      () => /denied by user 111: use the trash instead/.test(second.text),
      "denied by reply",
    );
    await sentTo("111", /tool said.*use the trash instead/);
    expect(existsSync(kept)).toBe(true);
  });

  it("shows a turn's steps in one status message, edited at most once a second", async () => {
    const steps = [1, 2, 3].map((index) => ({
      toolUse: { name: "Bash", input: { command: `sleep 0.3; echo step ${index}` } },
    }));
    messagesApi.push(...steps);
    telegram.pushMessage({ userId: 111, text: "three steps please" });
    await sentTo("111", /tool said.*step 3/);
    const status = await sentTo("111", /^Done: 3 steps/, "the status closed");
    expect(status.text).toMatch(/✓ Bash: sleep 0.3; echo step 1 \(\d+ s\)/);
    expect(status.text).toContain("echo step 3");
    const edits = telegram.sent
      .filter((message) => message.chatId === "111")
      .flatMap((message) => message.edits.slice(1));
    const times = edits.map((edit) => edit.at).sort((a, b) => a - b);
    for (let index = 1; index < times.length; index++) {
      expect((times[index] ?? 0) - (times[index - 1] ?? 0)).toBeGreaterThanOrEqual(900);
    }
  });

  it("sends a reply cut by a SIGKILL once, after the restart", async () => {
    await stopRudder(server);
    const run = serve("killed");
    await polling(run);
    telegram.failNext("sendMessage", { status: 0, hang: true, text: /survive the kill/ });
    telegram.pushMessage({ userId: 111, text: "survive the kill" });
    await waitFor(
      () =>
        telegram.calls.some(
          (call) => call.method === "sendMessage" && /survive the kill/.test(call.body.text),
        ),
      "the answer's sendMessage under way",
      30_000,
    );
    run.kill("SIGKILL");
    await run.exited;
    expect(find("111", /survive the kill/)).toBeUndefined();
    const again = serve("killed");
    await polling(again);
    await sentTo("111", /survive the kill/);
    await waitFor(() => /may repeat/.test(again.stderr()), "the resend marked may repeat");
    expect(telegram.sent.filter((message) => /survive the kill/.test(message.text))).toHaveLength(
      1,
    );
    const token = readFileSync(join(root, "killed", "token"), "utf8").trim();
    expect(again.stdout() + again.stderr()).not.toContain(telegram.token.split(":")[1]);
    expect(token).not.toBe("");
  });

  it("survives SIGKILLs between storing a message and its claim, and between storing a reply with a file and recording it", async () => {
    for (const run of servers) await stopRudder(run);
    writeFileSync(join(root, "workspace", "report.txt"), "the report");
    messagesApi.push({ toolUse: { name: "send_file", input: { path: "report.txt" } } });
    // Killed once the message is stored, before its delivery claim is finished: Telegram
    // delivers the update again to the next life, which must not store it twice.
    const first = serve("reply-kill", { RUDDER_TEST_KILL_AT: "message-stored" });
    await polling(first);
    telegram.pushMessage({ userId: 111, text: "send the report" });
    await first.exited;
    // The next life answers the stored message and is killed once the answer is stored,
    // before the reply ledger records it.
    const killed = serve("reply-kill", { RUDDER_TEST_KILL_AT: "reply-stored" });
    await killed.exited;
    expect(killed.stderr()).toMatch(/message 111:\d+ was delivered before; dropped/);
    expect(telegram.sentFiles.filter((file) => file.name === "report.txt")).toHaveLength(0);
    const again = serve("reply-kill");
    await polling(again);
    const file = await waitFor(
      () => telegram.sentFiles.find((sent) => sent.name === "report.txt"),
      "the file sent after the restart",
      30_000,
    );
    expect(file.data.toString()).toBe("the report");
    const answer = await sentTo("111", /tool said.*will be sent/);
    // Text first, then its file, as a live reply goes; each once.
    const at = (method: string, text?: string) =>
      telegram.calls.findIndex(
        (call) => call.method === method && (text === undefined || call.body.text === text),
      );
    expect(at("sendMessage", answer.text)).toBeLessThan(at("sendDocument"));
    expect(telegram.sent.filter((message) => message.text === answer.text)).toHaveLength(1);
    expect(telegram.sentFiles.filter((sent) => sent.name === "report.txt")).toHaveLength(1);
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(again.stdout())?.[0];
    const token = readFileSync(join(root, "reply-kill", "token"), "utf8").trim();
    const response = await fetch(`${url}/api/channels/telegram:111/messages`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const { messages } = (await response.json()) as { messages: Array<{ text: string }> };
    expect(messages.filter((message) => message.text === "send the report")).toHaveLength(1);
  });
});
