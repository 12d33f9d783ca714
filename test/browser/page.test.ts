/**
 * The web page in a real browser (headless Debian Chromium through
 * playwright-core) against the real gateway, with two kinds of agents:
 *
 * - the fake Claude Code CLI in its `steer` scenario: a turn answers
 *   "working on: X", then waits for the next message and finishes with
 *   "steered: Y" (X and Y as the gateway hands them over, inside its
 *   external-content markers). So the steer lands mid-turn by construction;
 * - rudder itself (`rudder run` in stream-json mode, from source) against the
 *   fake Messages API: a turn streams text, then runs a bash command that
 *   waits for a file the test creates after steering, then streams the reply.
 *
 * The page is built from the current `web/` source into a temporary folder.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, startGateway } from "../../src/gateway/index.js";
import {
  type FakeMessagesApi,
  lastUserText,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import { FAKE_CLAUDE } from "../helpers/fixtures.js";
import {
  type BrowserHarness,
  builtRudderGateway,
  userMessage as messageIn,
  results,
  startBrowserHarness,
} from "./browser-harness.js";

const demoHint = "Set ANTHROPIC_API_KEY to use a real model.";
const channel = "browser-test";

let harness: BrowserHarness;
/** The tab of the test that is running. */
let page: Page;

beforeAll(async () => {
  harness = await startBrowserHarness();
});

afterAll(async () => {
  await harness?.close();
});

function userMessage(text: string) {
  return messageIn(page, text);
}

describe("the web page, with the fake Claude Code CLI as the agents", () => {
  let gateway: RunningGateway;
  let pageErrors: string[];

  beforeAll(async () => {
    gateway = await startGateway({
      dataDir: join(harness.scratch, "fake-cli-data"),
      port: 0,
      webRoot: harness.webRoot,
      engine: {
        claudeBin: FAKE_CLAUDE,
        cwd: harness.scratch,
        env: { FAKE_CLAUDE_SCENARIO: "steer" },
      },
      engineName: "fake-claude",
      demo: true,
      demoHint,
      heartbeatMs: 1000,
      info: { cwd: harness.scratch, engine: "claude", model: "claude-test-model", sandbox: false },
    });
    ({ page, pageErrors } = await harness.openTab());
  });

  afterAll(async () => {
    await page?.close();
    await gateway?.close();
  });

  it("takes the one-time link, streams a turn, shows a steer, and ends with the reply", async () => {
    expect(gateway.pageLink).not.toContain(gateway.token);
    await page.goto(gateway.pageLink);
    await expect
      .poll(() => page.evaluate('localStorage.getItem("rudder.token")'))
      .toBe(gateway.token);
    expect(new URL(page.url()).hash).toBe("");
    await expect.poll(() => page.getByTestId("demo-banner").textContent()).toContain(demoHint);
    expect(await page.getByTestId("demo-banner").textContent()).toContain(
      "Demo model: replies are scripted",
    );
    expect(await page.getByTestId("auth-notice").isHidden()).toBe(true);
    // The header says where and how the agents work (GET /api/info, with the token).
    await expect
      .poll(() => page.getByTestId("agent-info").textContent())
      .toBe(`${harness.scratch} \u00b7 claude \u00b7 claude-test-model \u00b7 sandbox off`);

    await page.getByTestId("new-channel-input").fill(channel);
    await page.getByTestId("new-channel-input").press("Enter");
    await expect.poll(() => page.getByTestId("conversation-title").textContent()).toBe(channel);
    await page.locator('[data-testid="connection"][data-status="open"]').waitFor();

    const composer = page.getByTestId("composer-input");
    await composer.fill("hello page");
    await composer.press("Enter");
    const first = userMessage("hello page");
    await first.and(page.locator('[data-disposition="started"]')).waitFor();

    // The fake answers at once, then holds the turn open until the next message.
    const streaming = page.locator('[data-testid="turn"][data-turn-state="streaming"]');
    await streaming.filter({ hasText: /working on:[\s\S]*hello page/ }).waitFor();
    expect(await page.getByTestId("turn-status").textContent()).toContain("steers the turn");
    expect(await composer.isEnabled()).toBe(true);

    await composer.fill("use the steering wheel");
    await page.getByTestId("composer-send").click();
    const steer = userMessage("use the steering wheel");
    await steer.and(page.locator('[data-disposition="steered"]')).waitFor();
    expect(await steer.getByTestId("message-label").textContent()).toBe("steering the turn");

    const reply = page.locator('[data-testid="turn"][data-kind="reply"]');
    await reply.filter({ hasText: /steered:[\s\S]*use the steering wheel/ }).waitFor();
    await page.locator('[data-testid="turn"][data-turn-state="streaming"]').waitFor({
      state: "detached",
    });
    await first.and(page.locator('[data-state="answered"]')).waitFor();
    await steer.and(page.locator('[data-state="answered"]')).waitFor();
    expect(await page.getByTestId("turn-status").textContent()).toBe("");

    // The side panel polls the live agent processes.
    await page.locator(`[data-testid="runner"][data-channel="${channel}"]`).waitFor();
    await page.locator(`[data-testid="channel"][data-channel="${channel}"]`).waitFor();

    await page.screenshot({ path: join(results, "page.png"), fullPage: true });

    // At phone width everything stacks into one column without sideways scrolling.
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    expect(await page.getByTestId("composer-send").isVisible()).toBe(true);
    await page.screenshot({ path: join(results, "page-narrow.png"), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });

    // After a reload the history and the replayed events show the turn once, in order.
    await page.reload();
    await page.locator('[data-testid="turn"][data-kind="reply"]').waitFor();
    const log = page.getByTestId("log");
    const markers = ["hello page", "working on:", "use the steering wheel", "steered:"];
    await expect
      .poll(async () => {
        const text = (await log.textContent()) ?? "";
        const positions = markers.map((marker) => text.indexOf(marker));
        return positions.every((position, index) => position > (positions[index - 1] ?? -1));
      })
      .toBe(true);
    const text = (await log.textContent()) ?? "";
    expect(text.split("steered:")).toHaveLength(2);
    expect(text.split("working on:")).toHaveLength(2);
    expect(pageErrors).toEqual([]);
  });

  it("adds and removes a schedule, shows a bad cron's error, and stops an agent process", async () => {
    await page.getByTestId("schedule-cron").fill("not a cron");
    await page.getByTestId("schedule-prompt").fill("say hello");
    await page.getByTestId("schedule-add").click();
    await expect.poll(() => page.getByTestId("schedules-error").textContent()).toContain("cron");

    await page.getByTestId("schedule-cron").fill("0 0 1 1 *");
    await page.getByTestId("schedule-add").click();
    const schedule = page.getByTestId("schedule").filter({ hasText: "say hello" });
    await schedule.waitFor();
    expect(await schedule.textContent()).toContain(channel);
    expect(await page.getByTestId("schedules-error").textContent()).toBe("");

    // A schedule that paused itself (three failures) offers Resume.
    const database = new Database(join(harness.scratch, "fake-cli-data", "gateway.db"));
    database.prepare("UPDATE schedules SET paused = 1, consecutive_failures = 3").run();
    database.close();
    await page.reload();
    await schedule.and(page.locator('[data-paused="true"]')).waitFor();
    await schedule.getByTestId("schedule-resume").click();
    await schedule.and(page.locator('[data-paused="false"]')).waitFor();
    expect(await schedule.getByTestId("schedule-resume").count()).toBe(0);

    await schedule.getByTestId("schedule-remove").click();
    await schedule.waitFor({ state: "detached" });

    const runner = page.locator(`[data-testid="runner"][data-channel="${channel}"]`);
    await runner.getByTestId("runner-stop").click();
    await runner.waitFor({ state: "detached" });
  });

  it("asks for a link when it has no token, a spent code or a wrong token", async () => {
    const notice = page.getByTestId("auth-notice");
    await page.evaluate('localStorage.removeItem("rudder.token")');
    await page.goto(gateway.url);
    await notice.waitFor();
    expect(await notice.textContent()).toContain("needs a link from the gateway");
    expect(await notice.textContent()).toContain("rudder link");

    // The link printed at start was traded by the first test: it is spent.
    await page.goto("about:blank");
    await page.goto(gateway.pageLink);
    await expect.poll(() => notice.textContent()).toContain("This link did not work");
    expect(await notice.textContent()).toContain("already used");
    expect(await page.evaluate('localStorage.getItem("rudder.token")')).toBe(null);

    await page.goto("about:blank");
    await page.goto(gateway.url);
    await page.evaluate('localStorage.setItem("rudder.token", "not-the-token")');
    await page.reload();
    await expect.poll(() => notice.textContent()).toContain("did not accept");

    await page.goto("about:blank");
    await page.goto(gateway.newPageLink());
    await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
    expect(await notice.isHidden()).toBe(true);
  });
});

describe("the web page, with rudder agents on the fake Messages API", () => {
  let api: FakeMessagesApi;
  let gateway: RunningGateway;
  let workspace: string;
  let pageErrors: string[];

  beforeAll(async () => {
    workspace = join(harness.scratch, "workspace");
    mkdirSync(workspace);
    // The bash call holds the turn open until the test creates `release` (at most 30 s).
    const waitForRelease =
      "for i in $(seq 1 600); do [ -e release ] && break; sleep 0.05; done; echo released";
    api = await startFakeMessagesApi({
      script: [
        {
          text: "Let me look around first.",
          toolUse: { name: "Bash", input: { command: waitForRelease } },
        },
        {
          reply: (request) => ({
            text: `Steered by: ${lastUserText(request)} All done.`,
            chunks: 6,
          }),
        },
      ],
    });
    gateway = await startGateway({
      dataDir: join(harness.scratch, "rudder-data"),
      port: 0,
      ...builtRudderGateway(harness, api.url, workspace),
    });
    ({ page, pageErrors } = await harness.openTab());
  });

  afterAll(async () => {
    await page?.close();
    await gateway?.close();
    await api?.close();
  });

  it("streams text and a tool call, takes a steer during the tool, and shows the reply", async () => {
    await page.goto(gateway.newPageLink());
    expect(await page.getByTestId("demo-banner").isHidden()).toBe(true);
    await page.getByTestId("new-channel-input").fill(channel);
    await page.getByTestId("new-channel-input").press("Enter");
    await page.locator('[data-testid="connection"][data-status="open"]').waitFor();

    const composer = page.getByTestId("composer-input");
    await composer.fill("look at the workspace");
    await composer.press("Enter");
    const streaming = page.locator('[data-testid="turn"][data-turn-state="streaming"]');
    await streaming.filter({ hasText: "Let me look around first." }).waitFor();
    const tool = page.locator('[data-testid="activity"][data-activity="tool"]');
    await tool.and(page.locator('[data-status="running"]')).filter({ hasText: "Bash" }).waitFor();

    await composer.fill("take the other road");
    await composer.press("Enter");
    const steer = userMessage("take the other road");
    await steer.and(page.locator('[data-disposition="steered"]')).waitFor();
    expect(await steer.getByTestId("message-label").textContent()).toBe("steering the turn");

    writeFileSync(join(workspace, "release"), "");
    await tool.and(page.locator('[data-status="ok"]')).waitFor();
    const reply = page.locator('[data-testid="turn"][data-kind="reply"]');
    await reply.filter({ hasText: /Steered by:[\s\S]*take the other road/ }).waitFor();
    await streaming.waitFor({ state: "detached" });
    await userMessage("look at the workspace")
      .and(page.locator('[data-state="answered"]'))
      .waitFor();

    await tool.locator("summary").click();
    expect(await tool.getByTestId("tool-output").textContent()).toContain("released");
    await page.screenshot({ path: join(results, "page-rudder.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});

describe("the web page's routing labels", () => {
  /** A gateway on the fake CLI in `scenario`, its page open in a fresh tab; closed after `body`. */
  async function withGateway(
    name: string,
    options: { scenario: string; maxLive?: number },
    body: (pageErrors: string[]) => Promise<void>,
  ): Promise<void> {
    const gateway = await startGateway({
      dataDir: join(harness.scratch, `${name}-data`),
      port: 0,
      webRoot: harness.webRoot,
      engine: {
        claudeBin: FAKE_CLAUDE,
        cwd: harness.scratch,
        env: { FAKE_CLAUDE_SCENARIO: options.scenario },
      },
      engineName: "fake-claude",
      rateLimitRetryMs: 600_000,
      heartbeatMs: 1000,
      ...(options.maxLive === undefined ? {} : { maxLive: options.maxLive }),
    });
    const tab = await harness.openTab();
    page = tab.page;
    try {
      await page.goto(gateway.newPageLink());
      await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
      await body(tab.pageErrors);
    } finally {
      await page.close();
      await gateway.close();
    }
  }

  async function send(text: string): Promise<void> {
    await page.getByTestId("composer-input").fill(text);
    await page.getByTestId("composer-input").press("Enter");
  }

  it("labels a rate-limited message deferred, with the gateway's fallback reply", async () => {
    await withGateway("rate-limit", { scenario: "rate_limit" }, async (pageErrors) => {
      await send("are you there");
      const fallback = page.locator('[data-testid="message"][data-kind="fallback"]');
      await fallback.waitFor();
      expect(await fallback.getByTestId("message-label").textContent()).toBe("fallback");
      expect(await fallback.getByTestId("message-note").textContent()).toMatch(/^Retry at /);
      const first = userMessage("are you there");
      await first.and(page.locator('[data-state="deferred"]')).waitFor();
      expect(await first.getByTestId("message-label").textContent()).toBe("deferred");

      await send("still there");
      const second = userMessage("still there");
      await second.and(page.locator('[data-disposition="deferred"]')).waitFor();
      expect(await second.getByTestId("message-label").textContent()).toBe("deferred");
      expect(pageErrors).toEqual([]);
    });
  });

  it("shows how full the context is, compacts and resets it, and keeps the dividers", async () => {
    await withGateway("context", { scenario: "normal" }, async (pageErrors) => {
      const meter = page.getByTestId("context-meter");
      await send("remember the heron");
      await page.locator('[data-testid="turn"][data-kind="reply"]', { hasText: "echo:" }).waitFor();
      await expect.poll(() => meter.textContent()).toBe("context 1k / 200k (1%)");

      await page.getByTestId("compact-focus").fill("keep the heron");
      await page.getByTestId("channel-compact").click();
      const dividers = page.getByTestId("divider");
      await dividers
        .and(page.locator('[data-kind="compaction"]'))
        .filter({ hasText: "Context compacted: 1k -> 500 tokens (focus: keep the heron)." })
        .waitFor();
      await expect.poll(() => meter.textContent()).toBe("context 500 / 200k (0%)");
      expect(await page.getByTestId("compact-focus").inputValue()).toBe("");

      await page.getByTestId("channel-reset").click();
      await dividers.and(page.locator('[data-kind="reset"]')).waitFor();
      await expect.poll(() => meter.textContent()).toBe("");

      // Typed into the composer, /compact of a conversation that has not begun is an error.
      await send("/compact");
      await page
        .locator('[data-testid="message"][data-kind="error"]', { hasText: "nothing to compact" })
        .waitFor();
      await page.screenshot({ path: join(results, "page-context.png"), fullPage: true });

      // The history keeps both dividers, in place, after a reload.
      await page.reload();
      await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
      await expect
        .poll(() => dividers.evaluateAll((found) => found.map((node) => node.dataset.kind)))
        .toEqual(["compaction", "reset"]);
      const text = (await page.getByTestId("log").textContent()) ?? "";
      expect(text.indexOf("remember the heron")).toBeLessThan(text.indexOf("Context compacted"));
      expect(pageErrors).toEqual([]);
    });
  });

  it("labels a message answered by a one-shot process", async () => {
    await withGateway("one-shot", { scenario: "normal", maxLive: 0 }, async (pageErrors) => {
      await send("quick question");
      const message = userMessage("quick question");
      await message.and(page.locator('[data-disposition="one_shot"]')).waitFor();
      expect(await message.getByTestId("message-label").textContent()).toBe("one-shot");
      await page.locator('[data-testid="turn"][data-kind="reply"]', { hasText: "echo:" }).waitFor();
      await message.and(page.locator('[data-state="answered"]')).waitFor();
      expect(pageErrors).toEqual([]);
    });
  });
});

describe("the web page's permission prompts", () => {
  /** A gateway whose fake CLI asks permission for `touch made-by-tool` on every turn. */
  const permissionGateway = (dataFolder: string) =>
    startGateway({
      dataDir: join(harness.scratch, dataFolder),
      port: 0,
      webRoot: harness.webRoot,
      engine: {
        claudeBin: FAKE_CLAUDE,
        cwd: harness.scratch,
        env: { FAKE_CLAUDE_SCENARIO: "permission" },
      },
      engineName: "fake-claude",
      heartbeatMs: 1000,
    });

  it("shows a tool call that needs permission as a card, and Allow lets the turn finish", async () => {
    const gateway = await permissionGateway("permission-data");
    const tab = await harness.openTab();
    page = tab.page;
    try {
      await page.goto(gateway.newPageLink());
      await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
      await page.getByTestId("composer-input").fill("make the file");
      await page.getByTestId("composer-input").press("Enter");

      const card = page.locator('[data-testid="permission-request"][data-state="pending"]');
      await card.waitFor();
      expect(await card.locator(".permission-text").textContent()).toBe(
        "Bash wants to run: touch made-by-tool",
      );
      expect(await page.getByTestId("turn-status").textContent()).toContain(
        "waiting for your decision",
      );
      const allow = card.getByRole("button", { name: /^Allow Bash: touch made-by-tool$/ });
      expect(await card.getByTestId("permission-deny").getAttribute("aria-label")).toBe(
        "Deny Bash: touch made-by-tool",
      );
      await page.screenshot({ path: join(results, "page-permission.png"), fullPage: true });

      // A tab opened while the request waits shows it too, and sees it settled from here.
      const later = await harness.openTab();
      try {
        await later.page.goto(gateway.newPageLink());
        const elsewhere = later.page.locator('[data-testid="permission-request"]');
        await elsewhere.and(later.page.locator('[data-state="pending"]')).waitFor();
        expect(await elsewhere.count()).toBe(1);
        expect(await allow.count()).toBe(1);
        // Allow always: this exact command, in this channel, from now on (a stored grant).
        await card
          .getByRole("button", { name: "Allow always in this channel: Bash: touch made-by-tool" })
          .click();
        await elsewhere.and(later.page.locator('[data-state="allowed"]')).waitFor();
        expect(later.pageErrors).toEqual([]);
      } finally {
        await later.page.close();
      }

      const settled = page.locator('[data-testid="permission-request"][data-state="allowed"]');
      await settled.waitFor();
      expect(await settled.getByTestId("permission-outcome").textContent()).toBe(
        "Allowed always in this channel (this exact command).",
      );
      expect(await settled.getByTestId("permission-allow").count()).toBe(0);
      const reply = page.locator('[data-testid="turn"][data-kind="reply"]');
      await reply.filter({ hasText: "permission: allow" }).waitFor();
      await userMessage("make the file").and(page.locator('[data-state="answered"]')).waitFor();
      await expect.poll(() => page.getByTestId("turn-status").textContent()).toBe("");
      expect(tab.pageErrors).toEqual([]);
    } finally {
      await page.close();
      await gateway.close();
    }
  });
  it("Deny sends the note typed on the card, and the agent gets it", async () => {
    const gateway = await permissionGateway("permission-deny-data");
    const tab = await harness.openTab();
    page = tab.page;
    try {
      await page.goto(gateway.newPageLink());
      await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
      await page.getByTestId("composer-input").fill("make another file");
      await page.getByTestId("composer-input").press("Enter");
      const card = page.locator('[data-testid="permission-request"][data-state="pending"]');
      await card.waitFor();
      await card.getByTestId("permission-note").fill("not in this folder");
      await card.getByTestId("permission-deny").click();
      const denied = page.locator('[data-testid="permission-request"][data-state="denied"]');
      await denied.waitFor();
      expect(await denied.getByTestId("permission-outcome").textContent()).toBe(
        "Denied: not in this folder",
      );
      const reply = page.locator('[data-testid="turn"][data-kind="reply"]');
      await reply.filter({ hasText: "permission: deny not in this folder" }).waitFor();
      expect(tab.pageErrors).toEqual([]);
    } finally {
      await page.close();
      await gateway.close();
    }
  });
});
