/**
 * `/status` of a channel says what its binding's agents are, the binding's Claude Code
 * `settings` included (as its agents get them with `--settings`): a rudder binding whose
 * settings turn the sandbox off and name a model says so, where the gateway's defaults (the
 * same folder, no settings) have the sandbox on; a claude binding whose settings turn Claude
 * Code's own sandbox on says it is on.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { serveConfig } from "../../src/cli/serve-config.js";
import { BindingInfo } from "../../src/gateway/bindings/binding-info.js";
import { ChannelModels } from "../../src/gateway/bindings/channel-models.js";
import { channelStatus, statusText } from "../../src/gateway/bindings/channel-status.js";

let root: string;
let info: BindingInfo;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rudder-binding-status-"));
  const project = join(root, "project");
  mkdirSync(project);
  mkdirSync(join(root, "home"));
  const file = join(root, "config.json");
  writeFileSync(
    file,
    JSON.stringify({
      defaults: { cwd: project },
      bindings: [
        {
          name: "open",
          match: ["open-*"],
          settings: { sandbox: { enabled: false }, model: "claude-haiku-4-5" },
        },
        {
          name: "boxed",
          match: ["boxed-*"],
          engine: "claude",
          model: "opus",
          settings: { sandbox: { enabled: true } },
        },
      ],
    }),
  );
  const config = await serveConfig({
    configFlag: file,
    dataDir: join(root, "data"),
    fallback: { cwd: root, engine: "rudder" },
    noSandbox: false,
    env: { PATH: process.env.PATH, HOME: join(root, "home"), ANTHROPIC_API_KEY: "dummy" },
  });
  if (config instanceof Error) throw config;
  info = new BindingInfo(config.bindings, new ChannelModels(), config.infoFor);
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

async function status(channelId: string): Promise<string> {
  return statusText(await channelStatus({ info }, channelId, null));
}

it("reads a rudder binding's settings: its sandbox off and its model, where the defaults' is on", async () => {
  const project = join(root, "project");
  const defaults = await status("web:other");
  // The defaults have no settings: rudder's sandbox confines their commands (bubblewrap here).
  expect(defaults).toContain("Binding: defaults");
  expect(defaults).toContain(`Folder: ${project}`);
  expect(defaults).not.toContain("Model: claude-haiku-4-5");
  expect(defaults).toContain("Sandbox: on");

  const open = await status("open-1");
  expect(open).toContain("Binding: open");
  expect(open).toContain(`Folder: ${project}`);
  expect(open).toContain("Engine: rudder");
  expect(open).toContain("Model: claude-haiku-4-5");
  expect(open).toContain("Sandbox: off");
});

it("says a claude binding's own sandbox is on when its settings turn it on", async () => {
  const boxed = await status("boxed-1");
  expect(boxed).toContain("Binding: boxed");
  expect(boxed).toContain("Engine: claude");
  expect(boxed).toContain("Model: opus");
  expect(boxed).toContain("Sandbox: on");
});
