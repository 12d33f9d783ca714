/**
 * The page as a daily chat, in headless Chromium against the real gateway whose agents are
 * rudder (`rudder run` in stream-json mode, from source) on the fake Messages API: answers
 * rendered as markdown (and hostile answers that must not run), Stop on a running turn,
 * honest errors with Retry, and tool calls as readable rows; a channel opened on a binding of the
 * configuration, renamed and archived, deleted; spend against the budgets. One browser and one gateway
 * for the file; what the fake model answers depends on the words of the message.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayBindings } from "../../src/gateway/bindings/bindings.js";
import { loadGatewayConfig } from "../../src/gateway/bindings/load-gateway-config.js";
import { type GatewayOptions, type RunningGateway, startGateway } from "../../src/gateway/index.js";
import {
  type FakeMessagesApi,
  lastToolResults,
  lastUserText,
  type RecordedRequest,
  type ScriptStep,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";
import {
  type BrowserHarness,
  builtRudderGateway,
  results,
  startBrowserHarness,
  userMessage,
} from "./browser-harness.js";

const markdownAnswer = [
  "# Plan",
  "",
  "Some **bold** words and `inline code`, then a list:",
  "",
  "1. first step",
  "2. second step",
  "",
  "```ts",
  "const answer: number = 42;",
  "function greet(name: string) { return 'hi ' + name; }",
  "```",
  "",
  "| file | lines |",
  "| --- | --- |",
  "| a.ts | 10 |",
  "| b.ts | 20 |",
  "",
  "> a quote to keep",
  "",
  "See [the docs](https://example.com/docs).",
].join("\n");

/** Everything a model (or a file it read) could write to make the page run code. */
const hostileAnswer = [
  "Hostile: <script>window.__pwned = 'script'</script>",
  '<img src="x" onerror="window.__pwned = \'onerror\'">',
  "<iframe src=\"javascript:window.__pwned = 'iframe'\"></iframe>",
  "[click me](javascript:window.__pwned='link')",
  "<a href=\"javascript:window.__pwned='anchor'\">anchor</a>",
  '<svg><script>window.__pwned = "svg"</script></svg>',
  '<form action="javascript:alert(1)"><button>go</button></form> end of hostile.',
].join("\n\n");

let overloads = 0;

/** What the fake model answers, by the words of the last message. */
function answer(request: RecordedRequest): ScriptStep {
  if (lastToolResults(request).length > 0) return { text: "The tool is done." };
  const said = lastUserText(request);
  // The first try is refused as overloaded; a Retry gets an answer.
  if (said.includes("be overloaded") && overloads++ === 0) {
    return { error: { status: 529, type: "overloaded_error", message: "Overloaded" } };
  }
  if (said.includes("render markdown")) return { text: markdownAnswer, chunks: 12 };
  if (said.includes("be hostile")) return { text: hostileAnswer, chunks: 5 };
  if (said.includes("use your tools")) {
    return {
      text: "Using three tools.",
      toolUse: [
        { name: "Edit", input: { file_path: "notes.txt", old_string: "beta", new_string: "BETA" } },
        { name: "Bash", input: { command: "seq 1 100" } },
        { name: "Glob", input: { pattern: "*.txt" } },
      ],
    };
  }
  if (said.includes("send me the files")) {
    return {
      toolUse: [
        { name: "send_file", input: { path: "inbox/pasted.png", caption: "yours" } },
        { name: "send_file", input: { path: "notes.txt" } },
      ],
    };
  }
  if (said.includes("think forever")) return { hangUntilAborted: true, text: "Thinking hard" };
  const last = (request.body?.messages ?? []).at(-1) as { content?: unknown } | undefined;
  const image = Array.isArray(last?.content)
    ? last.content.find((block: { type?: string }) => block?.type === "image")
    : undefined;
  if (image) return { text: `I see a pasted ${image.source.media_type} image.` };
  return { text: `echo: ${said.slice(-40)}` };
}

let harness: BrowserHarness;
let api: FakeMessagesApi;
let gateway: RunningGateway;
let gatewayOptions: GatewayOptions;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  harness = await startBrowserHarness();
  const workspace = join(harness.scratch, "workspace");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "notes.txt"), "alpha\nbeta\ngamma\n");
  api = await startFakeMessagesApi({ fallback: answer });
  // One binding the page can open channels on, with budgets; the channel "chat" uses the defaults.
  const configFile = join(harness.scratch, "gateway.json");
  writeFileSync(
    configFile,
    JSON.stringify({
      budget: { monthlyUsd: 50 },
      bindings: [
        {
          name: "billing",
          match: ["web:billing-*"],
          budget: { dailyUsd: 5, channel: { dailyUsd: 1 } },
        },
      ],
    }),
  );
  const loaded = await loadGatewayConfig(configFile);
  if (loaded instanceof Error) throw loaded;
  gatewayOptions = {
    bindings: new GatewayBindings(loaded, { cwd: workspace, engine: "rudder" }),
    dataDir: join(harness.scratch, "data"),
    port: 0,
    ...builtRudderGateway(harness, api.url, workspace),
    channelTools: { command: process.execPath, args: [RUDDER_CLI, "mcp-channel-tools"] },
    demo: true,
    demoHint: "Set ANTHROPIC_API_KEY to use a real model, or run rudder serve --model.",
  };
  gateway = await startGateway(gatewayOptions);
  ({ page, pageErrors } = await harness.openTab());
  await page.goto(gateway.newPageLink());
  await page.getByTestId("new-channel-input").fill("chat");
  await page.getByTestId("new-channel-input").press("Enter");
  await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
});

afterAll(async () => {
  await page?.close();
  await gateway?.close();
  await api?.close();
  await harness?.close();
});

async function send(text: string): Promise<void> {
  await page.getByTestId("composer-input").fill(text);
  await page.getByTestId("composer-input").press("Enter");
  await userMessage(page, text).waitFor();
}

/** The last finished turn of the log. */
const lastTurn = () => page.locator('[data-testid="turn"][data-turn-state="done"]').last();

describe("rendered answers", () => {
  it("renders markdown: headings, lists, highlighted code with Copy, tables, quotes, links", async () => {
    await send("please render markdown");
    const turn = lastTurn();
    await turn.locator("table").waitFor();
    expect(await turn.locator("h1").textContent()).toBe("Plan");
    expect(await turn.locator("strong").textContent()).toBe("bold");
    expect(await turn.locator("ol > li").count()).toBe(2);
    expect(await turn.locator("blockquote").textContent()).toContain("a quote to keep");
    expect(await turn.locator("td").allTextContents()).toEqual(["a.ts", "10", "b.ts", "20"]);
    const code = turn.locator(".code-block pre code");
    expect(await code.textContent()).toContain("const answer: number = 42;");
    expect(await code.locator(".hljs-keyword").count()).toBeGreaterThan(0);
    const font = await page.evaluate(
      "getComputedStyle(document.querySelector('.code-block pre code')).fontFamily",
    );
    expect(font).toMatch(/mono|Consolas|Menlo/i);
    const link = turn.locator("a", { hasText: "the docs" });
    expect(await link.getAttribute("target")).toBe("_blank");
    expect(await link.getAttribute("rel")).toContain("noopener");
    // Streamed in twelve pieces, nothing lost: the rendered text is the whole answer.
    expect(await turn.locator(".markdown").first().textContent()).toContain("See the docs.");

    await turn.getByTestId("copy-code").click();
    await expect.poll(() => turn.getByTestId("copy-code").textContent()).toMatch(/^Copied|Copy$/);
    await page.screenshot({ path: join(results, "page-chat-markdown.png"), fullPage: true });
  });

  it("never runs what a hostile answer carries, streamed or loaded from the store", async () => {
    const inert = async () => {
      const log = page.getByTestId("log");
      await log.getByText("end of hostile.").first().waitFor();
      expect(await page.evaluate("window.__pwned")).toBeUndefined();
      expect(await log.locator("script, iframe, form, svg script").count()).toBe(0);
      expect(await log.locator("[onerror]").count()).toBe(0);
      const hrefs = await log
        .locator("a")
        .evaluateAll((links) => links.map((link) => link.getAttribute("href") ?? ""));
      expect(hrefs.filter((href) => /^\s*javascript:/i.test(href))).toEqual([]);
    };
    await send("now be hostile");
    await lastTurn().getByText("end of hostile.").waitFor();
    await inert();
    await page.reload();
    await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
    await inert();
    expect(pageErrors).toEqual([]);
  });
});

describe("control and honest errors", () => {
  it("Stop interrupts the running turn; the process lives on and the next message works", async () => {
    const runner = page.locator('[data-testid="runner"][data-channel="chat"]');
    await runner.waitFor();
    const pidBefore = await runner.locator(".runner-meta").textContent();
    await send("please think forever");
    await page.locator('[data-turn-state="streaming"]', { hasText: "Thinking hard" }).waitFor();
    // The side panel's button ends the process; it is not the turn's Stop.
    expect(await runner.getByRole("button").textContent()).toBe("End process");
    await page.getByRole("button", { name: "Stop", exact: true }).click();
    const stopped = page.locator('[data-testid="message"][data-kind="error"]', {
      hasText: "Stopped: you interrupted this turn",
    });
    await stopped.waitFor();
    expect(await page.getByRole("button", { name: "Stop", exact: true }).isHidden()).toBe(true);
    await page.screenshot({ path: join(results, "page-chat-stopped.png"), fullPage: true });

    await send("are you still there");
    await lastTurn().filter({ hasText: "echo:" }).filter({ hasText: "still there" }).waitFor();
    await expect.poll(() => runner.locator(".runner-meta").textContent()).toMatch(/idle/);
    const pid = (text: string | null) => /pid (\d+)/.exec(text ?? "")?.[1];
    expect(pid(await runner.locator(".runner-meta").textContent())).toBe(pid(pidBefore));
  });

  it("says the model was overloaded in words, keeps the context meter, and Retry answers", async () => {
    const meter = page.getByTestId("context-meter");
    await expect.poll(() => meter.textContent()).toMatch(/^context \d/);
    const before = await meter.textContent();
    await send("please be overloaded");
    const failed = userMessage(page, "please be overloaded").and(
      page.locator('[data-state="failed"]'),
    );
    await failed.waitFor();
    const error = page.locator('[data-testid="message"][data-kind="error"]').last();
    expect(await error.textContent()).toContain("The model is overloaded right now");
    const log = (await page.getByTestId("log").textContent()) ?? "";
    expect(log).not.toContain("(success)");
    expect(log).not.toContain("Claude CLI");
    await page.getByTestId("composer-input").focus();
    expect(await meter.textContent()).toBe(before);
    await page.screenshot({ path: join(results, "page-chat-overloaded.png"), fullPage: true });

    await failed.getByRole("button", { name: "Retry" }).click();
    await lastTurn().filter({ hasText: "echo:" }).filter({ hasText: "be overloaded" }).waitFor();
    expect(pageErrors).toEqual([]);
  });
});

describe("tools you can read", () => {
  it("shows Edit as a coloured diff, Bash with its command and long output behind Show all, Glob's count", async () => {
    await send("please use your tools");
    const turn = lastTurn().filter({ hasText: "The tool is done." });
    await turn.waitFor();
    const edit = turn.locator('[data-testid="activity"][data-tool="edit"]');
    expect(await edit.locator("summary").textContent()).toContain("notes.txt (+1 \u22121)");
    expect(await edit.locator('[data-diff="remove"]').textContent()).toBe("-beta\n");
    expect(await edit.locator('[data-diff="add"]').textContent()).toBe("+BETA\n");
    expect(await edit.getByTestId("tool-diff").isVisible()).toBe(true);
    const color = await page.evaluate(
      "getComputedStyle(document.querySelector('[data-diff=add]')).backgroundColor",
    );
    expect(color).not.toBe("rgba(0, 0, 0, 0)");

    const bash = turn.locator('[data-testid="activity"][data-tool="bash"]');
    expect(await bash.locator("summary").textContent()).toContain("seq 1 100");
    await bash.locator("summary").click();
    expect(await bash.getByTestId("tool-input").textContent()).toBe("$ seq 1 100");
    const output = bash.getByTestId("tool-output");
    expect((await output.textContent())?.split("\n")).toHaveLength(30);
    await page.screenshot({ path: join(results, "page-chat-tools.png"), fullPage: true });
    await bash.getByTestId("tool-show-all").click();
    expect((await output.textContent())?.trim().split("\n")).toHaveLength(100);
    const font = await page.evaluate(
      "getComputedStyle(document.querySelector('[data-testid=tool-output]')).fontFamily",
    );
    expect(font).toMatch(/mono|Consolas|Menlo/i);

    const glob = turn.locator('[data-testid="activity"][data-tool="glob"]');
    expect(await glob.locator("summary").textContent()).toContain("*.txt \u2014 1 file");
    expect(pageErrors).toEqual([]);
  });
});

/** Each turn of the log as the page shows it: texts, tool rows, its duration and cost. */
const turnsShown = `[...document.querySelectorAll('[data-testid="log"] > *')].map((node) =>
  node.dataset.testid === "turn"
    ? {
        state: node.dataset.turnState,
        texts: [...node.querySelectorAll(".markdown")].map((text) => text.textContent.trim()),
        tools: [...node.querySelectorAll("summary")].map((row) => row.textContent.trim()),
        status: node.querySelector(".turn-status-text").textContent,
      }
    : { [node.dataset.kind ?? "other"]: node.querySelector('[data-testid="message-text"]')?.textContent },
)`;

describe("history that lasts", () => {
  it("shows every turn the same after a gateway restart: texts, tools, duration and cost", async () => {
    const live = await page.evaluate(turnsShown);
    expect(JSON.stringify(live)).toContain("notes.txt (+1");
    await gateway.close();
    gateway = await startGateway(gatewayOptions);
    await page.goto(gateway.newPageLink());
    await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
    await expect.poll(() => page.evaluate(turnsShown), { timeout: 15_000 }).toEqual(live);
    await page.screenshot({ path: join(results, "page-chat-restored.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});

describe("phone and tab", () => {
  it("at 390 px the conversation and message box fill the screen, panels fold, the banner is small", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const composer = await page.getByTestId("composer-input").boundingBox();
      expect(composer && composer.y + composer.height).toBeLessThanOrEqual(844);
      const log = await page.getByTestId("log").boundingBox();
      expect(log?.height).toBeGreaterThan(844 * 0.55);
      expect((await page.getByTestId("demo-banner").boundingBox())?.height).toBeLessThan(30);
      expect(await page.getByTestId("channels").isVisible()).toBe(false);
      expect(await page.getByTestId("runners").isVisible()).toBe(false);
      expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
      await page.screenshot({ path: join(results, "page-chat-phone.png") });
      await page.getByTestId("toggle-channels").click();
      await page.getByTestId("channels").waitFor();
      await page.locator('[data-testid="channel"][data-channel="chat"]').click();
      await page.getByTestId("channels").waitFor({ state: "hidden" });
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it("can be installed (manifest and icon) and notifies a hidden tab that a turn finished", async () => {
    const manifest = await page.evaluate(
      `fetch(document.querySelector('link[rel=manifest]').href).then((r) => r.json())`,
    );
    expect(manifest).toMatchObject({ name: "rudder", display: "standalone" });
    const icon = await page.evaluate(
      `fetch(new URL("icon.svg", location.href)).then((r) => r.headers.get("content-type"))`,
    );
    expect(icon).toBe("image/svg+xml");

    await page.context().grantPermissions(["notifications"], { origin: gateway.url });
    // The tab is hidden and any turn counts as long; notifications are recorded as they are made.
    await page.evaluate(`(() => {
      localStorage.setItem("rudder.longTurnMs", "1");
      Object.defineProperty(Document.prototype, "hidden", { get: () => true, configurable: true });
      window.__notices = [];
      const Real = window.Notification;
      window.Notification = class extends Real {
        constructor(title, options) {
          window.__notices.push(title);
          super(title, options);
        }
      };
    })()`);
    await send("hello from a hidden tab");
    await expect
      .poll(() => page.evaluate("window.__notices"), { timeout: 15_000 })
      .toEqual([expect.stringMatching(/^chat: the turn finished after \d+s$/)]);
    expect(pageErrors).toEqual([]);
  });
});

describe("who said it", () => {
  it("labels messages from rudder send, a schedule and a Telegram person by who sent them", async () => {
    const response = await fetch(`${gateway.url}/api/channels/chat/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${gateway.token}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "sent from the terminal", via: "cli" }),
    });
    expect(response.status).toBe(202);
    const author = (text: string) => userMessage(page, text).getByTestId("message-author");
    await expect
      .poll(() => author("sent from the terminal").textContent())
      .toBe("you, by rudder send");
    expect(await author("hello from a hidden tab").textContent()).toBe("you");

    // Messages a schedule and a Telegram chat stored, as their sources write them.
    const database = new Database(join(harness.scratch, "data", "gateway.db"));
    const insert = database.prepare(
      `INSERT INTO messages (id, channel_id, role, kind, text, state, source, created_at, updated_at)
       VALUES (?, 'chat', 'user', 'user', ?, 'answered', ?, ?, ?)`,
    );
    const now = new Date().toISOString();
    insert.run("from-schedule", "the morning report", "schedule:sched-1", now, now);
    insert.run("from-telegram", "hi from my phone", "telegram:42:Ada Lovelace", now, now);
    database.close();
    await page.reload();
    await expect
      .poll(() => author("hi from my phone").textContent())
      .toBe("Ada Lovelace (Telegram)");
    expect(await author("the morning report").textContent()).toBe("schedule");
    expect(await author("the morning report").getAttribute("title")).toContain("sched-1");
    expect(pageErrors).toEqual([]);
  });
});

describe("channels on bindings, named and archived, and spend", () => {
  it("opens a channel on a chosen binding, renames it, archives and restores it; spend against budgets", async () => {
    const channel = (id: string) => page.locator(`[data-testid="channel"][data-channel="${id}"]`);
    const openChat = async () => {
      await page.getByTestId("new-channel-binding").selectOption("");
      await page.getByTestId("new-channel-input").fill("chat");
      await page.getByTestId("new-channel-input").press("Enter");
    };
    await page.getByTestId("new-channel-binding").selectOption("billing");
    await page.getByTestId("new-channel-input").fill("q3");
    await page.getByTestId("new-channel-input").press("Enter");
    await expect
      .poll(() => page.getByTestId("conversation-title").textContent())
      .toBe("web:billing-q3");
    await expect
      .poll(() => page.getByTestId("agent-info").textContent())
      .toMatch(/^billing \u00b7 /);
    await send("hello billing");
    // The fake model echoes the end of what it got (here the fence around the message).
    await lastTurn().filter({ hasText: "hello billing" }).waitFor();

    // Rename: the head and the list say the new name; the id stays in the tooltip.
    await page.getByTestId("channel-rename").click();
    await page.getByTestId("channel-rename-input").fill("Q3 invoices");
    await page.getByTestId("channel-rename-input").press("Enter");
    await expect
      .poll(() => page.getByTestId("conversation-title").textContent())
      .toBe("Q3 invoices");
    await expect
      .poll(() => channel("web:billing-q3").locator(".channel-name").textContent())
      .toBe("Q3 invoices");

    // Archive: hidden from the list once another channel is open, behind "Archived (1)".
    await page.getByTestId("channel-archive").click();
    await expect.poll(() => page.getByTestId("channel-archive").textContent()).toBe("Restore");
    await openChat();
    await expect.poll(() => channel("web:billing-q3").count()).toBe(0);
    await page.getByTestId("channels-archived").click();
    await channel("web:billing-q3").and(page.locator("[data-archived]")).click();
    await expect
      .poll(() => page.getByTestId("conversation-title").textContent())
      .toBe("Q3 invoices");
    await userMessage(page, "hello billing").waitFor();
    await page.getByTestId("channel-archive").click();
    await expect.poll(() => page.getByTestId("channels-archived").count()).toBe(0);
    await page.screenshot({ path: join(results, "page-channels.png"), fullPage: true });

    // Spend: the gateway's month and the binding's day, each against its limit.
    const spend = page.getByTestId("spend");
    await expect
      .poll(() => spend.getByTestId("spend-gateway").getByTestId("spend-limit").textContent())
      .toMatch(/^this month: \$\d+\.\d+ \/ \$50/);
    expect(
      await spend
        .locator('[data-testid="spend-binding"][data-name="billing"]')
        .getByTestId("spend-limit")
        .textContent(),
    ).toMatch(/^today: \$\d+\.\d+ \/ \$5\.00/);
    await openChat();
  });
});

describe("deleting a channel", () => {
  it("deletes the open channel once confirmed: gone from the list and the gateway, another opened", async () => {
    const channel = (id: string) => page.locator(`[data-testid="channel"][data-channel="${id}"]`);
    await page.getByTestId("new-channel-binding").selectOption("");
    await page.getByTestId("new-channel-input").fill("doomed");
    await page.getByTestId("new-channel-input").press("Enter");
    await send("hello doomed");
    await lastTurn().filter({ hasText: "hello doomed" }).waitFor();
    await expect.poll(() => channel("doomed").count()).toBe(1);
    const asked: string[] = [];
    page.once("dialog", (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await page.getByTestId("channel-delete").click();
    await expect.poll(() => channel("doomed").count()).toBe(0);
    await expect
      .poll(() => page.getByTestId("conversation-title").textContent())
      .not.toBe("doomed");
    expect(asked[0]).toMatch(/^Delete the channel doomed\? Its history, grants and schedules/);
    const listed = await fetch(`${gateway.url}/api/channels`, {
      headers: { authorization: `Bearer ${gateway.token}` },
    });
    const { channels } = (await listed.json()) as { channels: Array<{ id: string }> };
    expect(channels.map((each) => each.id)).not.toContain("doomed");
    expect(pageErrors).toEqual([]);
  });
});

describe("attachments", () => {
  it("sends an image pasted into the message box, which the model sees", async () => {
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    // A paste as Chromium makes it: a ClipboardEvent whose clipboardData holds the file.
    await page.evaluate(`(() => {
      const bytes = Uint8Array.from(atob("${png}"), (char) => char.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
      const box = document.querySelector('[data-testid="composer-input"]');
      box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true }));
    })()`);
    await page.getByTestId("composer-attachment").filter({ hasText: "pasted.png" }).waitFor();
    await page.getByTestId("composer-input").fill("what did I paste?");
    await page.getByTestId("composer-input").press("Enter");
    await lastTurn().filter({ hasText: "I see a pasted image/png image." }).waitFor();
    expect(await page.getByTestId("composer-attachment").count()).toBe(0);
    // The message shows its attachment, the image, under its text (no marker line in it).
    const sent = page.getByTestId("message").filter({ hasText: "what did I paste?" }).last();
    await page.waitForFunction(
      (element) => (element as { naturalWidth?: number } | null)?.naturalWidth === 1,
      await sent.getByTestId("sent-image").elementHandle(),
    );
    expect(await sent.getByTestId("message-text").textContent()).toBe("what did I paste?");
    await page.screenshot({ path: join(results, "page-pasted-image.png") });
    const seen = api.requests.filter((request) =>
      JSON.stringify(request.body?.messages ?? []).includes(png.slice(0, 40)),
    );
    expect(seen.length).toBeGreaterThan(0);
    expect(pageErrors).toEqual([]);
  });

  it("shows the files the agent sent: an image inline, a file to download, the same after a reload", async () => {
    const shown = async () => {
      const files = lastTurn().getByTestId("sent-file");
      await files.nth(1).waitFor();
      const image = lastTurn().getByTestId("sent-image");
      await page.waitForFunction(
        (element) => (element as { naturalWidth?: number } | null)?.naturalWidth === 1,
        await image.elementHandle(),
      );
      expect(await image.getAttribute("alt")).toBe("pasted.png");
      const link = lastTurn().getByTestId("sent-file-link");
      expect(await link.textContent()).toBe("notes.txt (17 bytes)");
      const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
      expect(download.suggestedFilename()).toBe("notes.txt");
    };
    await send("send me the files");
    await shown();
    await page.screenshot({ path: join(results, "page-sent-files.png") });
    await page.reload();
    await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
    await shown();
    expect(pageErrors).toEqual([]);
  });
});
