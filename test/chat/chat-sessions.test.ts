import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeMessagesApi,
  lastUserText,
  startFakeMessagesApi,
} from "../helpers/fake-messages-api.js";
import type { Finished } from "../helpers/owned-process.js";
import { runRudder } from "../helpers/rudder-cli.js";

let api: FakeMessagesApi;
let workspace: string;
let home: string;

beforeEach(async () => {
  api = await startFakeMessagesApi();
  workspace = realpathSync(mkdtempSync(join(tmpdir(), "rudder-chat-sessions-")));
  home = mkdtempSync(join(tmpdir(), "rudder-chat-sessions-home-"));
});

afterEach(async () => {
  await api.close();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** `rudder chat` with piped input (no terminal): one turn per line, then EOF leaves. */
function chat(args: string[], lines: string[]): Promise<Finished> {
  return runRudder(["chat", ...args], {
    cwd: workspace,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: "dummy",
      RUDDER_MAX_RETRIES: "0",
    },
    input: lines.map((line) => `${line}\n`).join(""),
  });
}

function sessionIdOf(stdout: string): string {
  const id = /^session (\S+)/m.exec(stdout)?.[1];
  if (id === undefined) throw new Error(`no session line in: ${stdout}`);
  return id;
}

describe("rudder chat stores its conversation", () => {
  it("names the session, and --resume and --continue pick it up again", async () => {
    api.push(
      { text: "Noted: the word is heron." },
      { text: "It was heron." },
      { text: "Still heron." },
    );
    const first = await chat([], ["Remember the word heron."]);
    expect(first.code, first.stderr).toBe(0);
    const id = sessionIdOf(first.stdout);
    expect(first.stdout).toContain(`rudder chat --resume ${id}`);

    const resumed = await chat(["--resume", id], ["What was the word?"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`session ${id}  resumed (2 messages)`);
    const sent = api.mainRequests()[1]?.body.messages as Array<{ role: string }>;
    expect(JSON.stringify(sent)).toContain("Remember the word heron.");
    expect(JSON.stringify(sent)).toContain("Noted: the word is heron.");
    expect(lastUserText(api.mainRequests()[1]!)).toBe("What was the word?");

    const continued = await chat(["--continue"], ["And now?"]);
    expect(continued.code, continued.stderr).toBe(0);
    expect(sessionIdOf(continued.stdout)).toBe(id);
    expect(JSON.stringify(api.mainRequests()[2]?.body.messages)).toContain("It was heron.");
  });

  it("refuses an unknown session in one line, exit 1", async () => {
    const result = await chat(["--resume", "no-such-session"], ["hi"]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      "rudder chat: No conversation found with session ID: no-such-session",
    );
    expect(api.mainRequests()).toHaveLength(0);
  });
});
