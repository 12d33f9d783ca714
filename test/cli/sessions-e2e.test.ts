import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { type RudderRun, startRudder } from "../helpers/rudder-cli.js";

let api: FakeMessagesApi;
let root: string;
let folderA: string;
let folderB: string;
let home: string;
const runs: RudderRun[] = [];

beforeEach(async () => {
  api = await startFakeMessagesApi();
  root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-sessions-e2e-")));
  folderA = join(root, "a");
  folderB = join(root, "b");
  home = join(root, "home");
  for (const folder of [folderA, folderB, home]) mkdirSync(folder);
});

afterEach(async () => {
  for (const run of runs.splice(0)) run.kill();
  await api.close();
  rmSync(root, { recursive: true, force: true });
});

const rudderHome = () => join(root, "rudder-home");

/** Runs the built CLI in `cwd` to its end. */
async function rudder(cwd: string, ...args: string[]) {
  const run = startRudder(args, {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      RUDDER_HOME: rudderHome(),
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: "dummy",
      RUDDER_MAX_RETRIES: "0",
    },
  });
  runs.push(run);
  const { code } = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

function transcriptOf(id: string): string {
  return join(rudderHome(), "sessions", `${id}.jsonl`);
}

function setModified(id: string, daysAgo: number): string {
  const when = new Date(Math.floor(Date.now() / 1000) * 1000 - daysAgo * 86_400_000);
  utimesSync(transcriptOf(id), when, when);
  return when.toISOString().replace(".000Z", "Z");
}

describe("rudder sessions, built, against sessions of real rudder runs", () => {
  it("lists, shows, resumes by the listed id, removes and prunes", async () => {
    api.push(
      { toolUse: { name: "bash", input: { command: "printf heron" } } },
      { text: "Noted: the code word is heron." },
      { text: "Hello from b." },
    );
    const first = await rudder(folderA, "run", "remember the code word heron");
    expect(first).toMatchObject({ code: 0, stdout: "Noted: the code word is heron.\n" });
    const second = await rudder(folderB, "run", "say hello from b");
    expect(second).toMatchObject({ code: 0, stderr: "" });

    const listedAll = await rudder(folderA, "sessions", "list", "--all", "--json");
    expect(listedAll).toMatchObject({ code: 0, stderr: "" });
    const all = JSON.parse(listedAll.stdout) as Array<{ id: string; cwd: string }>;
    expect(all.map((session) => session.cwd).sort()).toEqual([folderA, folderB]);
    const idA = all.find((session) => session.cwd === folderA)?.id as string;
    const idB = all.find((session) => session.cwd === folderB)?.id as string;
    const modifiedA = setModified(idA, 2);
    const modifiedB = setModified(idB, 1);

    const here = await rudder(folderA, "sessions");
    expect(here).toEqual({
      code: 0,
      stdout: `${idA}  ${modifiedA}  4 messages  remember the code word heron\n`,
      stderr: "",
    });
    const everywhere = await rudder(folderA, "sessions", "--all");
    expect(everywhere.stdout).toBe(
      `${idB}  ${modifiedB}  2 messages  ${folderB}  say hello from b\n` +
        `${idA}  ${modifiedA}  4 messages  ${folderA}  remember the code word heron\n`,
    );

    const shown = await rudder(folderB, "sessions", "show", idA);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`session ${idA} (4 messages)\nfolder  ${folderA}\n`);
    expect(shown.stdout).toContain(
      "\n> remember the code word heron\n\n  * bash(printf heron)\n    -> heron\n\nNoted: the code word is heron.\n",
    );
    const missing = await rudder(folderA, "sessions", "show", "no-such-session");
    expect(missing).toEqual({
      code: 1,
      stdout: "",
      stderr: "rudder sessions show: No conversation found with session ID: no-such-session\n",
    });

    api.push({ text: "It was heron." });
    const resumed = await rudder(folderA, "run", "--resume", idA, "what was the code word?");
    expect(resumed).toMatchObject({ code: 0, stdout: "It was heron.\n" });
    expect(JSON.stringify(api.mainRequests().at(-1)?.body.messages)).toContain(
      "remember the code word heron",
    );
    const afterResume = JSON.parse((await rudder(folderA, "sessions", "--json")).stdout);
    expect(afterResume).toMatchObject([{ id: idA, messages: 6 }]);

    const removed = await rudder(folderA, "sessions", "rm", idB, "no-such-session");
    expect(removed).toEqual({
      code: 1,
      stdout: `removed ${idB}\n`,
      stderr: "rudder sessions rm: No conversation found with session ID: no-such-session\n",
    });
    expect(existsSync(transcriptOf(idB))).toBe(false);

    api.push({ text: "Old news." });
    const third = await rudder(folderB, "run", "--output-format", "json", "an old question");
    const idOld = JSON.parse(third.stdout).session_id as string;
    const modifiedOld = setModified(idOld, 40);
    const planned = await rudder(folderA, "sessions", "prune", "--older-than", "30d", "--dry-run");
    expect(planned).toEqual({
      code: 0,
      stdout: `would remove ${idOld}  ${modifiedOld}  ${folderB}\n`,
      stderr: "",
    });
    expect(existsSync(transcriptOf(idOld))).toBe(true);
    const pruned = await rudder(folderA, "sessions", "prune", "--older-than=30d");
    expect(pruned.stdout).toBe(`removed ${idOld}  ${modifiedOld}  ${folderB}\n`);
    const left = JSON.parse((await rudder(folderB, "sessions", "--all", "--json")).stdout);
    expect(left.map((session: { id: string }) => session.id)).toEqual([idA]);

    const bad = await rudder(folderA, "sessions", "prune", "--older-than", "soon");
    expect(bad.code).toBe(2);
    expect(bad.stderr.split("\n")[0]).toBe(
      'rudder sessions: --older-than takes a whole number and s, m, h, d or w, like 30d, 12h or 90m (got "soon")',
    );
  });
});
