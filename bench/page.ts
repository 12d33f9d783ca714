/**
 * The page's first paint of a long channel: a gateway whose store holds a channel of 200
 * messages (100 exchanges, each reply with a stored turn of markdown, a code block and a tool
 * call), opened in headless Chromium: the time from navigation until the newest page of it
 * (100 messages) is drawn, and until all 200 are after "Show earlier messages".
 * The bar: the first under 1 s on this machine.
 *
 * Run: npm run bench -- page (add --write to keep the result in docs/benchmarks/page.md)
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startGateway } from "../src/gateway/index.js";
import { SqliteGatewayStore } from "../src/gateway/store/sqlite/sqlite-store.js";
import { startBrowserHarness } from "../test/browser/browser-harness.js";
import { FAKE_CLAUDE } from "../test/helpers/fixtures.js";

const EXCHANGES = 100;
const ROUNDS = 5;

const reply = (index: number) =>
  [
    `## Step ${index}`,
    "",
    "Here is **what changed**, with a list:",
    "",
    "- one",
    "- two",
    "",
    "```ts",
    `export const value${index}: number = ${index};`,
    "```",
  ].join("\n");

const harness = await startBrowserHarness();
try {
  const dataDir = join(harness.scratch, "data");
  const options = {
    dataDir,
    port: 0,
    webRoot: harness.webRoot,
    engine: { claudeBin: FAKE_CLAUDE, cwd: harness.scratch },
  };
  // The history is written through the store, as the gateway writes it.
  const seeding = await startGateway(options);
  await seeding.close();
  const store = new SqliteGatewayStore(join(dataDir, "gateway.db"));
  for (let index = 0; index < EXCHANGES; index += 1) {
    const asked = await store.insertUserMessage("long", `question ${index}`, "http");
    const text = reply(index);
    const events = [
      { type: "text_delta", text },
      { type: "tool_start", toolUseId: `t${index}`, name: "Bash", input: { command: "ls" } },
      { type: "tool_end", toolUseId: `t${index}`, name: "Bash", content: "a\nb", isError: false },
    ];
    await store.settle({
      messageIds: [asked.id],
      state: "answered",
      reply: { kind: "reply", text },
      display: JSON.stringify({ events }),
    });
  }
  await store.close();

  const gateway = await startGateway(options);
  const { page } = await harness.openTab();
  const times: number[] = [];
  const whole: number[] = [];
  const turns = page.locator('[data-testid="turn"]');
  // The one-time link once (the page keeps its token); each round opens the page as a returning
  // user does.
  await page.goto(gateway.newPageLink());
  await turns.first().waitFor({ state: "attached", timeout: 30_000 });
  for (let round = 0; round < ROUNDS; round += 1) {
    await page.goto("about:blank");
    const started = performance.now();
    await page.goto(gateway.url);
    await turns.nth(EXCHANGES / 2 - 1).waitFor({ state: "attached", timeout: 30_000 });
    times.push(performance.now() - started);
    const earlier = performance.now();
    await page.getByTestId("history-earlier").click();
    await turns.nth(EXCHANGES - 1).waitFor({ state: "attached", timeout: 30_000 });
    whole.push(performance.now() - earlier);
  }
  await page.close();
  await gateway.close();
  const middle = (values: number[]) =>
    values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const median = middle(times);
  process.stdout.write(
    `page: a channel of ${EXCHANGES * 2} messages (markdown, a code block and a tool call per reply), median of ${ROUNDS}:\n` +
      `  first paint (the newest 100 messages drawn): ${Math.round(median)} ms; bar under 1000 ms ${median < 1000 ? "(met)" : "(MISSED)"}\n` +
      `  Show earlier messages (all 200 drawn again): ${Math.round(middle(whole))} ms\n`,
  );
} finally {
  await harness.close();
}
