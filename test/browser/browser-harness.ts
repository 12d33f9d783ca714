/**
 * What the browser tests share: the page built from `web/` into a temporary
 * folder (so a test always runs the current source and never touches
 * `web/dist`), headless Debian Chromium through playwright-core, and the
 * command that runs the built `rudder` (`npm run build`) as a gateway's agent.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { build } from "vite";
import type { GatewayOptions } from "../../src/gateway/index.js";
import { RUDDER_CLI } from "../helpers/fixtures.js";

export const repository = join(import.meta.dirname, "..", "..");
/** Screenshots go here (gitignored). */
export const results = join(repository, "test-results");

export interface Tab {
  page: Page;
  /** Uncaught errors of the page's own script. */
  pageErrors: string[];
}

export interface BrowserHarness {
  /** A temporary folder for the test's data; removed by `close`. */
  scratch: string;
  /** The built page, to pass to `startGateway` as `webRoot`. */
  webRoot: string;
  openTab(): Promise<Tab>;
  close(): Promise<void>;
}

export async function startBrowserHarness(): Promise<BrowserHarness> {
  const scratch = mkdtempSync(join(tmpdir(), "rudder-page-"));
  const webRoot = join(scratch, "web");
  mkdirSync(results, { recursive: true });
  let context: BrowserContext | undefined;
  const close = async () => {
    await context?.close();
    rmSync(scratch, { recursive: true, force: true });
  };
  try {
    await build({
      root: join(repository, "web"),
      configFile: join(repository, "web", "vite.config.ts"),
      logLevel: "warn",
      build: { outDir: webRoot, emptyOutDir: true },
    });
    context = await chromium.launchPersistentContext(join(scratch, "profile"), {
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      viewport: { width: 1280, height: 800 },
    });
  } catch (error) {
    await close();
    throw error;
  }
  const browser = context;
  return {
    scratch,
    webRoot,
    async openTab() {
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (error) => pageErrors.push(error.message));
      return { page, pageErrors };
    },
    close,
  };
}

/** A user message in the page's log, found by its text. */
export function userMessage(page: Page, text: string): Locator {
  return page.locator('[data-testid="message"][data-kind="user"]', { hasText: text });
}

/** An executable in `folder` that runs the built `rudder` (dist/cli.js) with its arguments. */
export function builtRudderCommand(folder: string): string {
  const command = join(folder, "rudder-agent");
  writeFileSync(command, `#!/bin/sh\nexec "${process.execPath}" "${RUDDER_CLI}" "$@"\n`);
  chmodSync(command, 0o755);
  return command;
}

/**
 * A page test's gateway, but for its data folder and port: the built page, and the built
 * `rudder` as the agent in `workspace` on the fake Messages API at `apiUrl` (no retries, so a
 * failure shows at once), with a heartbeat each second.
 */
export function builtRudderGateway(
  harness: BrowserHarness,
  apiUrl: string,
  workspace: string,
): Pick<GatewayOptions, "webRoot" | "engine" | "engineName" | "heartbeatMs"> {
  return {
    webRoot: harness.webRoot,
    engine: {
      claudeBin: builtRudderCommand(harness.scratch),
      args: ["--include-partial-messages", "--dangerously-skip-permissions"],
      cwd: workspace,
      env: {
        ANTHROPIC_BASE_URL: apiUrl,
        ANTHROPIC_API_KEY: "test-key",
        ANTHROPIC_AUTH_TOKEN: undefined,
        RUDDER_MAX_RETRIES: "0",
      },
    },
    engineName: "rudder",
    heartbeatMs: 1000,
  };
}
