/**
 * What the end-to-end tests of `rudder serve` with a chat source (Telegram, Discord) set up
 * alike: a folder holding `home/` (HOME) and `workspace/`, whose settings ask before `rm` so that
 * a permission card can be shown; a bot token written as the CLI reads a token file; the fake
 * model's answer to a tool result (what the tool said); and the environment that points the
 * gateway's agents at the fake Messages API. Nothing here registers hooks: each file starts and
 * stops its own fakes and gateways.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastToolResults, type RecordedRequest, type ScriptStep } from "./fake-messages-api.js";

/** A fresh folder named after `prefix`, with `home/` and `workspace/.rudder/settings.json` in it. */
export function chatGatewayRoot(prefix: string): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "workspace", ".rudder"), { recursive: true });
  writeFileSync(
    join(root, "workspace", ".rudder", "settings.json"),
    '{"permissions":{"ask":["Bash(rm:*)"]}}',
  );
  return root;
}

/** A token file as `--telegram-token-file` and the like read it: one line, owner only. */
export function writeTokenFile(path: string, token: string): void {
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
}

/** `tool said: <content>` when the request carries a tool's result, else undefined. */
export function toolSaid(request: RecordedRequest): ScriptStep | undefined {
  const results = lastToolResults(request);
  if (results.length === 0) return undefined;
  return { text: `tool said: ${JSON.stringify(results.at(-1)?.content ?? "")}` };
}

/**
 * The environment of a `rudder serve` run in `root` (see chatGatewayRoot): HOME its `home/`,
 * the agents on the fake Messages API at `messagesUrl` with no retries, plus `extra` (the fake
 * platform's address).
 */
export function serveEnv(
  root: string,
  messagesUrl: string,
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: join(root, "home"),
    RUDDER_MAX_RETRIES: "0",
    ANTHROPIC_BASE_URL: messagesUrl,
    ANTHROPIC_API_KEY: "dummy",
    ...extra,
  };
}
