/**
 * A worktree per conversation through the gateway, with the fake agent CLI editing files of its
 * working folder: two channels of one repository each edit the same file in a worktree of their
 * own without seeing the other's change, `GET /api/channels` lists each worktree with its branch
 * and state, a restarted gateway finds the same worktree, and a reset with uncommitted work is
 * refused until a person confirms it. Removing a channel (`DELETE /api/channels/:id`) takes its
 * worktree, history and schedules, keeps its spend counted, and is refused while a turn runs or
 * its worktree holds uncommitted work unless forced.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { channelsCommandLine } from "../../src/cli/channels.js";
import type { WorktreeStatus } from "../../src/gateway/worktrees/channel-worktrees.js";
import { FAKE_CLAUDE_SWITCH } from "../helpers/fixtures.js";
import { waitFor } from "../helpers/wait-for.js";
import { fakeLogEntries, openEvents, startTestGateway, type TestGateway } from "./helpers.js";
import { gitIn, isolatedWorktreeBindings } from "./worktree-fixture.js";

const root = mkdtempSync(join(tmpdir(), "rudder-worktree-channels-"));
const repository = join(root, "project");
const dataDir = join(root, "data");
const fakeLog = join(root, "fake.log");
const scenarioFile = join(root, "scenario");
let gateway: TestGateway;

const git = (...args: string[]) => gitIn(repository, ...args);

const start = () =>
  startTestGateway({
    prefix: "worktree-channels",
    dataDir,
    engine: {
      claudeBin: FAKE_CLAUDE_SWITCH,
      cwd: repository,
      env: { FAKE_CLAUDE_LOG: fakeLog, GATEWAY_TEST_SCENARIO_FILE: scenarioFile },
    },
    bindings: isolatedWorktreeBindings(repository),
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
  writeFileSync(scenarioFile, "normal");
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

interface Removed {
  removed: string;
  messages: number;
  schedules: string[];
  worktree: { removed: boolean; path: string; branch: string; branchKept: boolean } | null;
  text: string;
}

const listed = async () =>
  (
    await gateway.api<{ channels: Array<{ id: string }> }>("GET", "/api/channels")
  ).body.channels.map((channel) => channel.id);

describe("removing a channel", () => {
  it("removes its worktree, history and schedules, its branch kept when not merged, its spend still counted", async () => {
    const worktree = join(root, "worktrees");
    // web:one's change committed on its branch: clean, and ahead of the repository's HEAD.
    const place = (
      await gateway.api<{ channels: Array<{ id: string; worktree?: WorktreeStatus }> }>(
        "GET",
        "/api/channels",
      )
    ).body.channels.find((channel) => channel.id === "web:one")?.worktree;
    expect(place?.path.startsWith(worktree)).toBe(true);
    const inWorktree = (...args: string[]) => git("-C", place?.path ?? "", ...args);
    inWorktree("commit", "-qam", "one's change");
    const schedule = await gateway.api<{ schedule: { id: string } }>("POST", "/api/schedules", {
      cron: "0 0 1 1 *",
      channel: "web:one",
      prompt: "yearly",
    });
    const spentBefore = (
      await gateway.api<{ gateway: { today: { usd: number } } }>("GET", "/api/spend")
    ).body.gateway.today.usd;
    expect(spentBefore).toBeGreaterThan(0);

    const removed = await gateway.api<Removed>("DELETE", "/api/channels/web:one");
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({
      removed: "web:one",
      schedules: [schedule.body.schedule.id],
      worktree: { removed: true, path: place?.path, branch: place?.branch, branchKept: true },
    });
    expect(removed.body.messages).toBeGreaterThan(0);
    expect(removed.body.text).toContain(`branch ${place?.branch} kept (not merged)`);
    expect(existsSync(place?.path ?? "")).toBe(false);
    expect(git("worktree", "list")).not.toContain(place?.path);
    expect(git("branch", "--list", place?.branch ?? "")).toContain(place?.branch);
    expect(await gateway.messages("web:one")).toEqual([]);
    expect(await listed()).not.toContain("web:one");
    const schedules = await gateway.api<{ schedules: unknown[] }>("GET", "/api/schedules");
    expect(schedules.body.schedules).toEqual([]);
    const spentAfter = (
      await gateway.api<{ gateway: { today: { usd: number } } }>("GET", "/api/spend")
    ).body.gateway.today.usd;
    expect(spentAfter).toBeCloseTo(spentBefore, 6);
    expect((await gateway.api("DELETE", "/api/channels/web:one")).status).toBe(404);

    // A new message to the same id starts a fresh channel, on the branch that was kept.
    expect(await ask("web:one", "file-show notes.txt")).toContain("file notes.txt: one");
    expect((await gateway.messages("web:one")).length).toBe(2);
  });

  it("refuses while its worktree holds uncommitted work, unless forced", async () => {
    expect(await ask("web:two", "file-edit notes.txt twoagain")).toContain("twoagain");
    const refused = await gateway.api<{ error: string }>("DELETE", "/api/channels/web:two");
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(
      /^needs confirmation: channel web:two's worktree .* has 1 uncommitted path\(s\), which removing the channel deletes/,
    );
    expect((await gateway.messages("web:two")).length).toBeGreaterThan(0);

    const forced = await gateway.api<Removed>("DELETE", "/api/channels/web:two?force=1");
    expect(forced.status).toBe(200);
    expect(forced.body.worktree).toMatchObject({ removed: true, branchKept: false });
    expect(existsSync(forced.body.worktree?.path ?? "")).toBe(false);
    expect(git("branch", "--list", forced.body.worktree?.branch ?? "")).toBe("");
    expect(await gateway.messages("web:two")).toEqual([]);
  });

  it("refuses while a turn runs, and with force interrupts it first", async () => {
    writeFileSync(scenarioFile, "interrupt");
    try {
      const events = openEvents(`${gateway.url}/api/channels/busy/events?token=${gateway.token}`);
      await gateway.api("POST", "/api/channels/busy/messages", { text: "take your time" });
      // The fake waits for the interrupt once it has said that it works on the message.
      await events.waitFor(
        (event) =>
          event.data.type === "text_delta" && String(event.data.text).includes("take your"),
        "busy's turn working",
      );
      await events.close();
      const refused = await gateway.api<{ error: string }>("DELETE", "/api/channels/busy");
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatch(/^a turn is running in channel busy: stop it first/);
      const forced = await gateway.api<Removed>("DELETE", "/api/channels/busy?force=true");
      expect(forced.status).toBe(200);
      expect(forced.body).toMatchObject({ removed: "busy", worktree: null });
      expect(await gateway.messages("busy")).toEqual([]);
      expect(await listed()).not.toContain("busy");
      const runners = await gateway.api<{ runners: Array<{ channelId: string }> }>(
        "GET",
        "/api/runners",
      );
      expect(runners.body.runners.map((runner) => runner.channelId)).not.toContain("busy");
    } finally {
      writeFileSync(scenarioFile, "normal");
    }
  });

  it("rudder channels lists and removes them", async () => {
    await ask("cli-gone", "hello");
    const run = async (...argv: string[]) => {
      let stdout = "";
      let stderr = "";
      const sink = (write: (text: string) => void) =>
        new Writable({
          write(chunk, _encoding, done) {
            write(String(chunk));
            done();
          },
        });
      const code = await channelsCommandLine([...argv, "--url", gateway.url], {
        stdout: sink((text) => {
          stdout += text;
        }),
        stderr: sink((text) => {
          stderr += text;
        }),
        stdin: process.stdin,
        env: { RUDDER_TOKEN: gateway.token },
      });
      return { code, stdout, stderr };
    };
    const list = await run("list");
    expect(list.code).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(/^cli-gone\tdefaults\t\d{4}-/);
    expect(await run("rm", "cli-gone")).toEqual({
      code: 0,
      stdout: "channel cli-gone removed: 2 message(s) deleted.\n",
      stderr: "",
    });
    expect(await run("rm", "cli-gone")).toEqual({
      code: 1,
      stdout: "",
      stderr: "rudder channels: no channel cli-gone\n",
    });
  });
});
