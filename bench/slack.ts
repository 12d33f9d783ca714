// A Slack mention to the bot's first visible signs, on the fake Slack: `rudder serve` with its
// Slack source over Socket Mode and rudder agents on the fake Messages API (each turn runs one
// tool, so it has a status message). BENCH_THREADS mentions (default 200), each in a thread of
// its own, one every BENCH_GAP_MS (default 50); per mention: the time to the eyes reaction (the
// acknowledgement Slack's user sees; Socket Mode's envelope ack must leave within Slack's 3 s)
// and to the first message in its thread (the turn's status message), p50 and p99, measured on
// the fake's clock from the event's send to the call's arrival.
// Run: node --import tsx bench/slack.ts   (after npm run build)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastToolResults, startFakeMessagesApi } from "../test/helpers/fake-messages-api.js";
import { startFakeSlack } from "../test/helpers/fake-slack.js";
import { startRudder, stopRudder } from "../test/helpers/rudder-cli.js";
import { waitFor } from "../test/helpers/wait-for.js";
import { percentile } from "./gateway.js";

const threads = Number(process.env.BENCH_THREADS ?? 200);
const gapMs = Number(process.env.BENCH_GAP_MS ?? 50);
const USER = "U0BENCH";

const root = mkdtempSync(join(tmpdir(), "rudder-bench-slack-"));
for (const folder of ["home", "workspace", "data"]) mkdirSync(join(root, folder));
const messagesApi = await startFakeMessagesApi({
  fallback: (request) =>
    lastToolResults(request).length > 0
      ? { text: "done" }
      : { toolUse: { name: "Bash", input: { command: "echo bench" } } },
});
const slack = await startFakeSlack();
writeFileSync(join(root, "app-token"), slack.appToken);
writeFileSync(join(root, "bot-token"), slack.botToken);
const gateway = startRudder(
  [
    ...["serve", "--port", "0", "--data", join(root, "data"), "--no-sandbox"],
    ...["--slack-app-token-file", join(root, "app-token")],
    ...["--slack-bot-token-file", join(root, "bot-token"), "--slack-allow", USER],
  ],
  {
    cwd: join(root, "workspace"),
    env: {
      PATH: process.env.PATH,
      HOME: join(root, "home"),
      RUDDER_MAX_RETRIES: "0",
      ANTHROPIC_BASE_URL: messagesApi.url,
      ANTHROPIC_API_KEY: "dummy",
      RUDDER_SLACK_API_URL: slack.url,
    },
  },
);
try {
  await waitFor(() => /connected \(Socket Mode\)/.test(gateway.stderr()), "connected", 60_000);
  const said: Array<{ ts: string; at: number }> = [];
  for (let index = 0; index < threads; index++) {
    const at = Date.now();
    const message = slack.say({
      user: USER,
      channel: "C0BENCH",
      text: `<@${slack.botUserId}> bench ${index}`,
    });
    said.push({ ts: message.ts, at });
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  const firstCall = (method: string, match: (body: Record<string, unknown>) => boolean) =>
    slack.calls.find((call) => call.method === method && match(call.body))?.at;
  const reactions = () =>
    said.map(({ ts, at }) => {
      const reacted = firstCall("reactions.add", (body) => body.timestamp === ts);
      return reacted === undefined ? undefined : reacted - at;
    });
  const progress = () =>
    said.map(({ ts, at }) => {
      const posted = firstCall("chat.postMessage", (body) => body.thread_ts === ts);
      return posted === undefined ? undefined : posted - at;
    });
  await waitFor(
    () => progress().every((value) => value !== undefined),
    () =>
      `every thread's first message (${progress().filter((v) => v !== undefined).length}/${threads})`,
    600_000,
    200,
  );
  const acks = reactions().filter((value): value is number => value !== undefined);
  const firsts = progress() as number[];
  const row = (name: string, values: number[]) =>
    `| ${name} | ${values.length} | ${percentile(values, 0.5)} ms | ${percentile(values, 0.99)} ms |`;
  process.stdout.write(
    [
      `Slack: ${threads} mentions, one every ${gapMs} ms, each its own thread`,
      "",
      "| from the mention to | count | p50 | p99 |",
      "| --- | --- | --- | --- |",
      row("the eyes reaction (acknowledged)", acks),
      row("the first message in its thread (progress)", firsts),
      "",
    ].join("\n"),
  );
} finally {
  await stopRudder(gateway);
  await slack.close();
  await messagesApi.close();
  rmSync(root, { recursive: true, force: true });
}
