/**
 * The README's screenshot of the page, taken again: `npm run build`, then
 * `node --import tsx scripts/page-screenshot.ts [out.png]` (default docs/images/page.png).
 * It starts the built `rudder serve` in demo mode (no credentials, a temporary home, data folder
 * and sample project, a free loopback port), opens the printed one-time link in headless
 * Chromium (/usr/bin/chromium, through playwright-core), sends a message from the page, waits for
 * the demo agent's answer and its wake-up after its background task, and saves the page as it then looks. The gateway's process group is
 * killed on every way out.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { chromium } from "playwright-core";

const repository = join(import.meta.dirname, "..");
const output = resolve(process.argv[2] ?? join(repository, "docs", "images", "page.png"));

/** A port nobody listens on right now, on loopback. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const address = server.address();
  await new Promise<void>((closed) => server.close(() => closed()));
  if (address === null || typeof address === "string") throw new Error("no loopback port");
  return address.port;
}

/** The page link `rudder serve` prints once it accepts messages. */
function pageLink(gateway: ChildProcess): Promise<string> {
  return new Promise((found, failed) => {
    let output = "";
    let errors = "";
    gateway.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const link = /open the page \(one-time link\): (\S+)/.exec(output)?.[1];
      if (link !== undefined) found(link);
    });
    gateway.stderr?.on("data", (chunk: Buffer) => {
      errors = (errors + chunk.toString()).slice(-4000);
    });
    gateway.once("exit", (code) => failed(new Error(`rudder serve exited ${code}: ${errors}`)));
    setTimeout(() => failed(new Error(`no page link within 30 s: ${errors}`)), 30_000).unref();
  });
}

function sampleProject(folder: string): void {
  mkdirSync(join(folder, "src"), { recursive: true });
  writeFileSync(
    join(folder, "README.md"),
    "# weather-cli\n\nA small command-line tool that prints tomorrow's forecast.\n",
  );
  writeFileSync(join(folder, "package.json"), '{ "name": "weather-cli", "version": "1.0.0" }\n');
  writeFileSync(join(folder, "src", "forecast.ts"), "export const forecast = () => 'sunny';\n");
}

const scratch = mkdtempSync(join(tmpdir(), "rudder-screenshot-"));
const project = join(scratch, "weather-cli");
sampleProject(project);
const environment: Record<string, string> = {};
for (const [name, value] of Object.entries(process.env)) {
  if (value !== undefined && !name.startsWith("ANTHROPIC_") && !name.startsWith("RUDDER_")) {
    environment[name] = value;
  }
}
environment.HOME = join(scratch, "home");
environment.RUDDER_HOME = join(scratch, "home", ".rudder");
const port = await freePort();
const gateway = spawn(
  process.execPath,
  [join(repository, "dist", "cli.js"), "serve", "--port", String(port), "--cwd", project],
  { cwd: project, env: environment, detached: true, stdio: ["ignore", "pipe", "pipe"] },
);
gateway.on("error", () => {});
const stopGateway = () => {
  try {
    if (gateway.pid !== undefined) process.kill(-gateway.pid, "SIGKILL");
  } catch {
    // already gone
  }
};
process.once("exit", stopGateway);

try {
  const link = await pageLink(gateway);
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(link);
    await page.getByTestId("new-channel-input").fill("weather-cli");
    await page.getByTestId("new-channel-input").press("Enter");
    await page.locator('[data-testid="connection"][data-status="open"]').waitFor();
    await page.getByTestId("composer-input").fill("What does this project do?");
    await page.getByTestId("composer-send").click();
    await page.locator('[data-state="answered"]').first().waitFor({ timeout: 60_000 });
    // The demo's background task finishes a second later and the agent wakes to sum it up.
    const replies = page.locator('[data-testid="turn"][data-kind="reply"]');
    await replies.nth(1).waitFor({ timeout: 30_000 });
    await page.locator('[data-testid="runner"]').filter({ hasText: "idle" }).waitFor();
    mkdirSync(dirname(output), { recursive: true });
    await page.screenshot({ path: output });
    process.stdout.write(`saved ${output}\n`);
  } finally {
    await browser.close();
  }
} finally {
  stopGateway();
  rmSync(scratch, { recursive: true, force: true });
}
