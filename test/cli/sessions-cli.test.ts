import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SUMMARY_OPENING } from "../../src/agent/compaction-prompt.js";
import { sessionsDirectory, TranscriptStore } from "../../src/agent/transcript-store.js";
import { parseDuration, sessionsCommandLine } from "../../src/cli/sessions.js";
import type { Message } from "../../src/model/types.js";

let root: string;
let home: string;
let folderA: string;
let folderB: string;
let store: TranscriptStore;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-sessions-cli-")));
  home = join(root, "rudder-home");
  folderA = join(root, "a");
  folderB = join(root, "b");
  mkdirSync(folderA);
  mkdirSync(folderB);
  store = new TranscriptStore(sessionsDirectory({ RUDDER_HOME: home }));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** A stdout/stderr stand-in that keeps what is written, synchronously. */
function collector() {
  let text = "";
  const stream = {
    write(chunk: string | Uint8Array): boolean {
      text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      return true;
    },
  } as NodeJS.WritableStream;
  return { stream, text: () => text };
}

function sessions(...argv: string[]) {
  const stdout = collector();
  const stderr = collector();
  const code = sessionsCommandLine(argv, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin: new PassThrough(),
    env: { RUDDER_HOME: home, HOME: root },
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

function storeSession(id: string, cwd: string, history: Message[], modified: string): void {
  store.writer(id, cwd).write(history);
  utimesSync(store.pathOf(id), new Date(modified), new Date(modified));
}

const TOOL_CONVERSATION: Message[] = [
  { role: "user", content: "  list the\n files   here please " },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Let me look." },
      { type: "tool_use", id: "t1", name: "bash", input: { command: "ls -la" } },
      { type: "tool_use", id: "t2", name: "read_file", input: { path: "a.txt", limit: 3 } },
      { type: "tool_use", id: "t3", name: "todo", input: { items: [1, 2] } },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "t1", content: "a.txt\nb.txt\nc.txt\n" },
      { type: "tool_result", tool_use_id: "t2", content: "no such file", is_error: true },
      { type: "tool_result", tool_use_id: "t3", content: "" },
    ],
  },
  { role: "assistant", content: [{ type: "text", text: "Three files:\na, b and c." }] },
];

function seed(): void {
  storeSession("s-old", folderA, TOOL_CONVERSATION, "2026-01-02T03:04:05Z");
  storeSession(
    "s-new",
    folderA,
    [{ role: "user", content: `a long prompt ${"x".repeat(100)}` }],
    "2026-01-03T00:00:00Z",
  );
  storeSession("s-b", folderB, [{ role: "user", content: "in b" }], "2026-01-04T00:00:00Z");
}

describe("rudder sessions (in process)", () => {
  it("lists a folder's sessions newest first, one line each", () => {
    seed();
    const listed = sessions("list", "--cwd", folderA);
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.stdout).toBe(
      [
        `s-new  2026-01-03T00:00:00Z  1 message   a long prompt ${"x".repeat(43)}...`,
        "s-old  2026-01-02T03:04:05Z  4 messages  list the files here please",
        "",
      ].join("\n"),
    );
  });

  it("lists every folder with --all, as JSON for scripts, and says when there is nothing", () => {
    seed();
    const all = sessions("--all");
    expect(all.code).toBe(0);
    expect(all.stdout.split("\n")[0]).toBe("s-b    2026-01-04T00:00:00Z  1 message   ~/b  in b");
    expect(all.stdout.trim().split("\n")).toHaveLength(3);

    const json = sessions("list", "--all", "--json", "--limit", "2");
    const parsed = JSON.parse(json.stdout);
    expect(parsed.map((entry: { id: string }) => entry.id)).toEqual(["s-b", "s-new"]);
    expect(parsed[0]).toEqual({
      id: "s-b",
      cwd: folderB,
      createdAt: expect.stringMatching(/^\d{4}-/),
      updatedAt: "2026-01-04T00:00:00.000Z",
      messages: 1,
      compactions: 0,
      firstPrompt: "in b",
    });

    const empty = sessions("list", "--cwd", root);
    expect(empty).toMatchObject({ code: 0, stderr: "" });
    expect(empty.stdout).toBe("no sessions started in ~ (--all lists every folder's)\n");
  });

  it("notes a corrupt transcript on stderr and lists the rest", () => {
    seed();
    writeFileSync(store.pathOf("broken"), "not json at all");
    const listed = sessions("--all", "--json");
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toHaveLength(3);
    expect(listed.stderr).toBe(
      "rudder sessions: skipped broken: not a rudder transcript (no session header)\n",
    );
  });

  it("shows a conversation for a person, or its messages as JSON", () => {
    seed();
    const shown = sessions("show", "s-old");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^session s-old \(4 messages\)\nfolder {2}\S+\/a\nstarted /);
    expect(shown.stdout.split("\n").slice(3).join("\n")).toBe(
      [
        "",
        ">   list the",
        ">  files   here please",
        "",
        "Let me look.",
        "",
        "  * bash(ls -la)",
        "  * read_file(a.txt)",
        '  * todo({"items":[1,2]})',
        "    -> a.txt (+2 lines)",
        "    -> error: no such file",
        "    -> (empty)",
        "",
        "Three files:\na, b and c.",
        "",
      ].join("\n"),
    );
    const json = sessions("show", "s-old", "--json");
    expect(JSON.parse(json.stdout)).toEqual(TOOL_CONVERSATION);

    const missing = sessions("show", "nope");
    expect(missing).toEqual({
      code: 1,
      stdout: "",
      stderr: "rudder sessions show: No conversation found with session ID: nope\n",
    });
  });

  it("shows each compaction as a divider between the parts, and as a boundary item in JSON", () => {
    const summary = (text: string): Message => ({
      role: "user",
      content: [{ type: "text", text: `${SUMMARY_OPENING}\n\n<summary>\n${text}\n</summary>` }],
    });
    const boundary = (trigger: "auto" | "manual", preTokens: number, postTokens: number) => ({
      trigger,
      preTokens,
      postTokens,
      durationMs: 1200,
      at: "2026-01-02T03:04:05.000Z",
      userTexts: ["remember FACT-7"],
    });
    const writer = store.writer("s-compacted", folderA);
    const first: Message[] = [
      { role: "user", content: "remember FACT-7" },
      { role: "assistant", content: "Noted." },
    ];
    writer.write(first);
    const second: Message[] = [summary("The user asked to remember FACT-7."), ...first.slice(1)];
    writer.writeBoundary(boundary("auto", 182_400, 14_100), second);
    second.push({ role: "user", content: "and then?" }, { role: "assistant", content: "Then 2." });
    writer.write(second);
    const third: Message[] = [summary("FACT-7; then 2.")];
    writer.writeBoundary(boundary("manual", 15_000, 900), third);
    third.push({ role: "user", content: "last one" }, { role: "assistant", content: "Done." });
    writer.write(third);

    const shown = sessions("show", "s-compacted");
    expect(shown.code).toBe(0);
    expect(shown.stdout.split("\n")[0]).toBe("session s-compacted (9 messages, 2 compactions)");
    expect(shown.stdout.split("\n").slice(3).join("\n")).toBe(
      [
        "",
        "> remember FACT-7",
        "",
        "Noted.",
        "",
        "\u2500\u2500 compacted: 182k -> 14k tokens (auto, 2026-01-02T03:04:05Z) \u2500\u2500",
        "",
        "(the summary that replaced it: 5 lines)",
        "",
        "Noted.",
        "",
        "> and then?",
        "",
        "Then 2.",
        "",
        "\u2500\u2500 compacted: 15k -> 900 tokens (manual, 2026-01-02T03:04:05Z) \u2500\u2500",
        "",
        "(the summary that replaced it: 5 lines)",
        "",
        "> last one",
        "",
        "Done.",
        "",
      ].join("\n"),
    );

    const json = JSON.parse(sessions("show", "s-compacted", "--json").stdout) as unknown[];
    const item = { type: "compact_boundary", durationMs: 1200, at: "2026-01-02T03:04:05.000Z" };
    expect(json).toEqual([
      ...first,
      { ...item, trigger: "auto", preTokens: 182_400, postTokens: 14_100 },
      ...second,
      { ...item, trigger: "manual", preTokens: 15_000, postTokens: 900 },
      ...third,
    ]);
    const listed = JSON.parse(sessions("list", "--all", "--json").stdout) as Array<
      Record<string, unknown>
    >;
    expect(listed.find((entry) => entry.id === "s-compacted")).toMatchObject({
      messages: 9,
      compactions: 2,
      firstPrompt: "remember FACT-7",
    });
  });

  it("removes what exists, reports what does not, and refuses paths", () => {
    seed();
    const outside = join(home, "keep.jsonl");
    writeFileSync(outside, "x");
    const removed = sessions("rm", "s-old", "nope", "../keep", "s-b");
    expect(removed.code).toBe(1);
    expect(removed.stdout).toBe("removed s-old\nremoved s-b\n");
    expect(removed.stderr).toBe(
      "rudder sessions rm: No conversation found with session ID: nope\n" +
        "rudder sessions rm: Invalid session ID: ../keep\n",
    );
    expect(existsSync(outside)).toBe(true);
    expect(sessions("rm", "s-new")).toMatchObject({ code: 0, stdout: "removed s-new\n" });
  });

  it("prunes by age with a dry run, and rejects bad durations", () => {
    seed();
    const dry = sessions("prune", "--older-than", "1d", "--dry-run");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      [
        "would remove s-old  2026-01-02T03:04:05Z  ~/a",
        "would remove s-new  2026-01-03T00:00:00Z  ~/a",
        "would remove s-b  2026-01-04T00:00:00Z  ~/b",
        "",
      ].join("\n"),
    );
    expect(existsSync(store.pathOf("s-old"))).toBe(true);
    expect(sessions("prune", "--older-than=1d").stdout).toContain("removed s-b");
    expect(existsSync(store.pathOf("s-b"))).toBe(false);
    expect(sessions("prune", "--older-than", "1d").stdout).toBe("no sessions older than 1d\n");

    for (const bad of ["30", "0d", "1.5h", "-3d", "ten days"]) {
      const answer = sessions("prune", `--older-than=${bad}`);
      expect(answer.code).toBe(2);
      expect(answer.stderr.split("\n")[0]).toMatch(/^rudder sessions: (--older-than takes|option)/);
    }
    expect(sessions("prune").stderr.split("\n")[0]).toBe(
      "rudder sessions: prune needs --older-than <duration>, e.g. 30d",
    );
  });

  it("answers bad use with one line and the usage, exit 2", () => {
    const cases: Array<[string[], string]> = [
      [["frobnicate"], 'unknown subcommand "frobnicate"'],
      [["list", "--frobnicate"], "unknown option --frobnicate"],
      [["rm", "--all", "x"], "option --all does not apply to rm"],
      [["show"], "show needs exactly one session id"],
      [["rm"], "rm needs at least one session id"],
      [["list", "--limit", "0"], '--limit must be a positive whole number (got "0")'],
      [["list", "--all", "--cwd", "/"], "--all and --cwd do not go together"],
      [["list", "--cwd", join(root, "missing")], `no such folder: ${join(root, "missing")}`],
    ];
    for (const [argv, error] of cases) {
      const answer = sessions(...argv);
      expect(answer.code, argv.join(" ")).toBe(2);
      expect(answer.stderr.split("\n")[0]).toBe(`rudder sessions: ${error}`);
      expect(answer.stderr).toContain("usage: rudder sessions");
    }
    expect(sessions("--help")).toMatchObject({ code: 0, stderr: "" });
  });

  it("cuts a long first prompt between characters, not inside one", () => {
    storeSession(
      "emoji",
      folderA,
      [{ role: "user", content: "\u{1F600}".repeat(80) }],
      "2026-01-01T00:00:00Z",
    );
    const line = sessions("--cwd", folderA).stdout;
    expect(line).toBe(`emoji  2026-01-01T00:00:00Z  1 message  ${"\u{1F600}".repeat(57)}...\n`);
  });

  it("prints no terminal control characters from a transcript, C1 ones (8-bit CSI) included", () => {
    storeSession(
      "escapes",
      folderA,
      [
        { role: "user", content: "red \u001b[31mtext\u009b2J and \u0085more" },
        { role: "assistant", content: [{ type: "text", text: "ok\u009b0m done" }] },
      ],
      "2026-01-01T00:00:00Z",
    );
    const controls = (text: string): string[] =>
      [...text].filter((character) => {
        const code = character.charCodeAt(0);
        return (
          (code < 0x20 && character !== "\n" && character !== "\t") ||
          (code >= 0x7f && code <= 0x9f)
        );
      });
    const shown = sessions("show", "escapes");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("red  [31mtext 2J and  more");
    expect(controls(shown.stdout)).toEqual([]);
    expect(controls(sessions("--cwd", folderA).stdout)).toEqual([]);
  });

  it("parses durations", () => {
    expect(parseDuration("90m")).toBe(90 * 60_000);
    expect(parseDuration("12h")).toBe(12 * 3_600_000);
    expect(parseDuration("30d")).toBe(30 * 86_400_000);
    expect(parseDuration("2w")).toBe(14 * 86_400_000);
    expect(parseDuration("45s")).toBe(45_000);
    expect(parseDuration("0m")).toBeUndefined();
    expect(parseDuration("30")).toBeUndefined();
    expect(parseDuration("99999999999999999d")).toBeUndefined();
  });
});
