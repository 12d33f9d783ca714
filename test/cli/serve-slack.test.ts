/**
 * The built `rudder serve` with Slack on, one gateway for the file: its agents talk to the fake
 * Messages API (rudder by default; the real Claude Code CLI for the channel C0CLAUDE through a
 * binding), its Slack source to the fake Slack over Socket Mode. A mention is answered in its
 * thread; a permission request is a card whose button decides; both engines answer.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slackSignature } from "../../src/channels/slack/slack-events-api.js";
import { claudeCodeEnv } from "../helpers/claude-code-env.js";
import {
  echoFallback,
  type FakeMessagesApi,
  lastToolResults,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { type FakeSlack, startFakeSlack } from "../helpers/fake-slack.js";
import { type RudderRun, startRudder, stopRudder } from "../helpers/rudder-cli.js";
import { waitFor } from "../helpers/wait-for.js";

const repository = resolve(import.meta.dirname, "..", "..");
const ADA = "U0ADA";
const SECRET = "a-signing-secret";

let root: string;
let messagesApi: FakeMessagesApi;
let slack: FakeSlack;
let server: RudderRun;

const connected = (run: RudderRun, count: number) =>
  waitFor(
    () =>
      /one-time link/.test(run.stdout()) &&
      (run.stderr().match(/connected (again )?\(Socket Mode\)/g) ?? []).length >= count,
    () => `the gateway connected to Slack: ${run.stderr()}`,
    60_000,
  );

function serve(): RudderRun {
  const claudeBin = execFileSync(
    "bash",
    [join(repository, "scripts", "install-claude-code.sh"), "--print-path"],
    { encoding: "utf8" },
  ).trim();
  return startRudder(
    [
      ...["serve", "--port", "0", "--data", join(root, "data"), "--no-sandbox"],
      ...["--config", join(root, "config.json")],
      ...["--slack-app-token-file", join(root, "app-token")],
      ...["--slack-bot-token-file", join(root, "bot-token"), "--slack-allow", ADA],
    ],
    {
      cwd: join(root, "workspace"),
      env: {
        ...claudeCodeEnv(join(root, "home"), messagesApi.url),
        RUDDER_CLAUDE_BIN: claudeBin,
        RUDDER_MAX_RETRIES: "0",
        RUDDER_SLACK_API_URL: slack.url,
      },
    },
  );
}

const botSaid = (channel: string, threadTs: string, pattern: RegExp, timeoutMs = 30_000) =>
  waitFor(
    () => slack.botMessages(channel, threadTs).find((message) => pattern.test(message.text)),
    () =>
      `the bot to say ${pattern} in ${channel}/${threadTs}; it said ${JSON.stringify(slack.botMessages(channel, threadTs).map((each) => each.text))}\n${server.stderr()}`,
    timeoutMs,
  );

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-serve-slack-")));
  for (const folder of ["home", "workspace", "data"]) mkdirSync(join(root, folder));
  mkdirSync(join(root, "workspace", ".rudder"));
  writeFileSync(
    join(root, "workspace", ".rudder", "settings.json"),
    '{"permissions":{"ask":["Bash(rm:*)"]}}',
  );
  writeFileSync(
    join(root, "config.json"),
    JSON.stringify({
      defaults: { engine: "rudder", cwd: join(root, "workspace") },
      bindings: [{ name: "claude", match: ["slack:*:C0CLAUDE:*"], engine: "claude" }],
      slack: { signingSecretFile: "signing-secret" },
    }),
  );
  writeFileSync(join(root, "signing-secret"), `${SECRET}\n`, { mode: 0o600 });
  messagesApi = await startFakeMessagesApi({
    fallback: (request) => {
      const results = lastToolResults(request);
      return results.length > 0
        ? { text: `tool said: ${JSON.stringify(results[0]?.content ?? "")}` }
        : echoFallback(request);
    },
  });
  slack = await startFakeSlack();
  writeFileSync(join(root, "app-token"), `${slack.appToken}\n`, { mode: 0o600 });
  writeFileSync(join(root, "bot-token"), `${slack.botToken}\n`, { mode: 0o600 });
  server = serve();
  await waitFor(
    () =>
      /one-time link/.test(server.stdout()) && /connected \(Socket Mode\)/.test(server.stderr()),
    () => `the gateway connected to Slack: ${server.stderr()}`,
    60_000,
  );
}, 120_000);

afterAll(async () => {
  if (server) await stopRudder(server);
  await slack?.close();
  await messagesApi?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("rudder serve with Slack", () => {
  it("answers a mention in its thread (rudder), eyes then a check, and never logs a token", async () => {
    const said = slack.say({
      user: ADA,
      channel: "C0MAIN",
      text: `<@${slack.botUserId}> hello from slack`,
    });
    const answer = await botSaid("C0MAIN", said.ts, /hello from slack/);
    expect(answer.text).toMatch(/^echo: /);
    await waitFor(() => said.reactions.has("white_check_mark"), "the check mark");
    const logged = `${server.stdout()}${server.stderr()}`;
    expect(logged).not.toContain(slack.botToken);
    expect(logged).not.toContain(slack.appToken);
  });

  it("asks with buttons, and Ada's Allow once runs the command", async () => {
    const doomed = join(root, "workspace", "doomed.txt");
    writeFileSync(doomed, "bye");
    messagesApi.push({ toolUse: { name: "Bash", input: { command: "rm doomed.txt" } } });
    const said = slack.say({
      user: ADA,
      channel: "C0MAIN",
      text: `<@${slack.botUserId}> delete doomed.txt`,
    });
    const card = await botSaid("C0MAIN", said.ts, /Permission request.*\n.*rm doomed\.txt/);
    const actions = card.blocks?.find((block) => block.type === "actions");
    slack.press({
      user: ADA,
      channel: "C0MAIN",
      ts: card.ts,
      value: String(actions?.elements[0]?.value),
    });
    await botSaid("C0MAIN", said.ts, /tool said/);
    expect(existsSync(doomed)).toBe(false);
    await waitFor(
      () => /allowed once/i.test(card.text),
      () => `the card edited: ${card.text}`,
    );
  });

  it("after being killed, answers what it had acknowledged and what was said while it was down, once each", async () => {
    const said = slack.say({ user: ADA, channel: "C0MAIN", text: `<@${slack.botUserId}> before` });
    await botSaid("C0MAIN", said.ts, /before/);
    const earlier = slack.say({ user: ADA, channel: "D0ADA", text: "a DM before" });
    await botSaid("D0ADA", earlier.ts, /a DM before/);
    // Acknowledged once stored; killed while its turn waits on the model: the store has it.
    const asked = messagesApi.mainRequests().length;
    messagesApi.push({ hangUntilAborted: true });
    const held = slack.say({ user: ADA, channel: "C0HELD", text: `<@${slack.botUserId}> held` });
    await waitFor(
      () => slack.acks.some((ack) => ack.envelopeId === held.envelopeId),
      () => `the ack of the held message: ${server.stderr()}`,
    );
    await waitFor(() => messagesApi.mainRequests().length > asked, "the held turn asking");
    server.kill("SIGKILL");
    await server.exited;
    const first = slack.say({
      user: ADA,
      channel: "C0MAIN",
      text: "while down one",
      threadTs: said.ts,
      offline: true,
    });
    const dm = slack.say({ user: ADA, channel: "D0ADA", text: "hello while down", offline: true });
    // A DM the bot never talked in: found by listing its DMs (conversations.list types=im).
    const fresh = slack.say({ user: ADA, channel: "D0FRESH", text: "a new DM", offline: true });
    server = serve();
    await connected(server, 1);
    await botSaid("C0MAIN", said.ts, /while down one/);
    await botSaid("D0ADA", dm.ts, /hello while down/);
    await botSaid("C0HELD", held.ts, /echo: .*held/s);
    await botSaid("D0FRESH", fresh.ts, /a new DM/);
    // A live message after the catch-up: once it is answered, nothing before it is still coming.
    slack.say({ user: ADA, channel: "C0MAIN", text: "after", threadTs: said.ts });
    await botSaid("C0MAIN", said.ts, /echo: .*after/s);
    const answers = slack.botMessages("C0MAIN", said.ts).map((message) => message.text);
    expect(answers.filter((text) => text.includes("before"))).toHaveLength(1);
    expect(answers.filter((text) => text.includes("while down one"))).toHaveLength(1);
    expect(
      slack.botMessages("D0ADA", dm.ts).filter((m) => m.text.includes("hello while down")),
    ).toHaveLength(1);
    expect(first.ts > said.ts).toBe(true);
    expect(slack.botMessages("C0HELD", held.ts).filter((m) => /echo/.test(m.text))).toHaveLength(1);
  }, 120_000);

  it("uploads into the thread a file the agent sends with send_file", async () => {
    writeFileSync(join(root, "workspace", "report.txt"), "the report's own bytes");
    messagesApi.push({
      toolUse: {
        name: "send_file",
        input: { path: "report.txt", caption: "the **report**" },
      },
    });
    const said = slack.say({ user: ADA, channel: "C0FILES", text: `<@${slack.botUserId}> file?` });
    const upload = await waitFor(
      () => [...slack.uploads.values()].find((each) => each.channel === "C0FILES"),
      () => `the upload: ${server.stderr()}`,
      30_000,
    );
    expect(upload).toMatchObject({
      filename: "report.txt",
      threadTs: said.ts,
      initialComment: "the *report*",
    });
    expect(upload.body?.includes("the report's own bytes")).toBe(true);
  });

  it("takes the Events API at POST /slack/events, signed, before the token check", async () => {
    const url = (/one-time link\): (\S+)/.exec(server.stdout())?.[1] ?? "").replace(
      /\/#code=.*/,
      "",
    );
    const body = JSON.stringify({ type: "url_verification", challenge: "c-1" });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signed = (signature: string) =>
      fetch(`${url}/slack/events`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-slack-request-timestamp": timestamp,
          "x-slack-signature": signature,
        },
        body,
      });
    expect((await signed("v0=00")).status).toBe(401);
    const answered = await signed(slackSignature(SECRET, timestamp, body));
    expect(await answered.json()).toEqual({ challenge: "c-1" });
  });

  it("answers through the real Claude Code where a binding says so", async () => {
    const said = slack.say({
      user: ADA,
      channel: "C0CLAUDE",
      text: `<@${slack.botUserId}> hello claude`,
    });
    const answer = await botSaid("C0CLAUDE", said.ts, /hello claude/, 90_000);
    expect(answer.text).toMatch(/echo: /);
  }, 120_000);
});
