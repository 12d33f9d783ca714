/**
 * A worktree per conversation through the gateway, with the fake agent CLI editing files of its
 * working folder: two channels of one repository each edit the same file in a worktree of their
 * own without seeing the other's change, `GET /api/channels` lists each worktree with its branch
 * and state, a restarted gateway finds the same worktree, and a reset with uncommitted work is
 * refused until a person confirms it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayBindings } from "../../src/gateway/bindings/bindings.js";
import type { WorktreeStatus } from "../../src/gateway/worktrees/channel-worktrees.js";
import { FAKE_CLAUDE_SWITCH } from "../helpers/fixtures.js";
import { waitFor } from "../helpers/wait-for.js";
import { fakeLogEntries, startTestGateway, type TestGateway } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "rudder-worktree-channels-"));
const repository = join(root, "project");
const dataDir = join(root, "data");
const fakeLog = join(root, "fake.log");
let gateway: TestGateway;

function git(...args: string[]): string {
  const result = spawnSync("git", args, {
    cwd: repository,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "p",
      GIT_AUTHOR_EMAIL: "p@h",
      GIT_COMMITTER_NAME: "p",
      GIT_COMMITTER_EMAIL: "p@h",
    },
  });
  return `${result.stdout}${result.stderr}`;
}

const start = () =>
  startTestGateway({
    prefix: "worktree-channels",
    dataDir,
    engine: { claudeBin: FAKE_CLAUDE_SWITCH, cwd: repository, env: { FAKE_CLAUDE_LOG: fakeLog } },
    bindings: new GatewayBindings(
      {
        file: "gateway.json",
        config: { bindings: [{ name: "isolated", match: ["web:*"], isolation: "worktree" }] },
        hash: "",
      },
      { cwd: repository, engine: "claude" },
    ),
    worktreeRoot: join(root, "worktrees"),
  });

/** Sends `text` and resolves with the channel's next answer's text. */
async function ask(channelId: string, text: string): Promise<string> {
  const before = (await gateway.messages(channelId)).length;
  await gateway.api("POST", `/api/channels/${channelId}/messages`, { text });
  const answer = await waitFor(async () => {
    const messages = await gateway.messages(channelId);
    return messages.slice(before).find((message) => message.role !== "user");
  }, `an answer in ${channelId}`);
  return answer.text;
}

beforeAll(async () => {
  mkdirSync(repository);
  git("init", "-q", "-b", "main");
  writeFileSync(join(repository, "notes.txt"), "original\n");
  git("add", ".");
  git("commit", "-qm", "first");
  gateway = await start();
});
afterAll(async () => {
  await gateway.cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe("a worktree per conversation", () => {
  it("two channels editing the same file do not see each other's change", async () => {
    expect(await ask("web:one", "file-edit notes.txt one")).toContain("file notes.txt: one");
    expect(await ask("web:two", "file-edit notes.txt two")).toContain("file notes.txt: two");
    expect(await ask("web:one", "file-show notes.txt")).toContain("file notes.txt: one");
    expect(readFileSync(join(repository, "notes.txt"), "utf8")).toBe("original\n");
    // A channel no binding isolates works in the folder as it is.
    expect(await ask("plain", "file-show notes.txt")).toContain(`original in ${repository}`);

    const { body } = await gateway.api<{
      channels: Array<{ id: string; worktree?: WorktreeStatus }>;
    }>("GET", "/api/channels");
    const one = body.channels.find((channel) => channel.id === "web:one")?.worktree;
    expect(one).toMatchObject({ state: "dirty", changes: 1, ahead: 0, behind: 0 });
    expect(one?.branch).toMatch(/^rudder\/web-one-[0-9a-f]{8}$/);
    expect(git("worktree", "list")).toContain(`[${one?.branch}]`);
    expect(body.channels.find((channel) => channel.id === "plain")?.worktree).toBeUndefined();
  });

  it("keeps the worktree across a gateway restart", async () => {
    await gateway.close();
    gateway = await start();
    expect(await ask("web:one", "file-show notes.txt")).toContain("file notes.txt: one");
    const starts = fakeLogEntries(fakeLog).filter((entry) => entry.event === "start");
    const places = new Set(
      starts.filter((entry) => String(entry.cwd).includes("web-one")).map((entry) => entry.cwd),
    );
    expect(places.size).toBe(1);
    // `/status` names the worktree, its branch and its state.
    expect(await ask("web:one", "/status")).toMatch(
      new RegExp(
        `Folder: ${[...places][0]} \\(worktree of ${repository}, branch rudder/web-one-[0-9a-f]{8}, 1 uncommitted\\)`,
      ),
    );
  });

  it("refuses a reset that would lose uncommitted work until a person confirms", async () => {
    const refused = await gateway.api<{ error: string }>("POST", "/api/channels/web:two/reset");
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/needs confirmation: .* has 1 uncommitted path/);
    expect(await ask("web:two", "/clear")).toMatch(/needs confirmation/);
    expect(await ask("web:two", "file-show notes.txt")).toContain("file notes.txt: two");

    const confirmed = await gateway.api<{ worktree: { removed: boolean; path: string } }>(
      "POST",
      "/api/channels/web:two/reset",
      { confirm: true },
    );
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.worktree).toMatchObject({ removed: true, branchKept: false });
    expect(existsSync(confirmed.body.worktree.path)).toBe(false);
    // The next message starts a fresh worktree from HEAD.
    expect(await ask("web:two", "file-show notes.txt")).toContain("file notes.txt: original");
  });
});
