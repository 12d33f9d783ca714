import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeMessagesApi, startFakeMessagesApi } from "../helpers/fake-messages-api.js";
import { type Engine, oneShotEnv, runOneShot } from "../helpers/one-shot-engine.js";

/**
 * `.claude/rules/**\/*.md` as project instructions, next to the real Claude Code 2.1.328 on the
 * same tree against the fake Messages API: both load the user's rules, each folder's rules
 * between its `.claude/CLAUDE.md` and its `CLAUDE.local.md` (subfolders after files), follow a
 * rule's imports, and leave out path-scoped rules (`paths` front matter) and files not `.md`;
 * rules alone do not stop the AGENTS.md fallback. Compared: the order of the "Contents of"
 * headings each sends the model, within one rules folder as a set (Claude Code lists a folder
 * in the file system's order, rudder in name order, files before subfolders).
 */

/** `paths` with each run of one folder's rules sorted. */
function rulesAsSets(paths: string[]): string[] {
  const folderOf = (path: string) => /^(.*\/\.claude\/rules)\//.exec(path)?.[1];
  const out: string[] = [];
  let run: string[] = [];
  const flush = () => {
    out.push(...run.sort());
    run = [];
  };
  for (const path of paths) {
    const folder = folderOf(path);
    if (folder === undefined || (run.length > 0 && folderOf(run[0] as string) !== folder)) flush();
    if (folder === undefined) out.push(path);
    else run.push(path);
  }
  flush();
  return out;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tree(withClaudeFiles: boolean): { root: string; home: string; workspace: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-rules-")));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write("home/.claude/rules/a-user.md", "RULE-USER\n");
  write("parent/.claude/rules/a-parent.md", "RULE-PARENT\n");
  write("parent/ws/.claude/rules/a-plain.md", "RULE-PLAIN\n");
  write("parent/ws/.claude/rules/b-imports.md", "RULE-IMPORTS see @c-extra.md\n");
  write("parent/ws/.claude/rules/c-extra.md", "RULE-EXTRA\n");
  write("parent/ws/.claude/rules/d-notes.txt", "RULE-TXT\n");
  write("parent/ws/.claude/rules/e-scoped.md", '---\npaths:\n  - "src/**"\n---\nRULE-SCOPED\n');
  write("parent/ws/.claude/rules/sub/a-nested.md", "RULE-NESTED\n");
  if (withClaudeFiles) {
    write("parent/ws/CLAUDE.md", "RULE-CLAUDE\n");
    write("parent/ws/.claude/CLAUDE.md", "RULE-DOT-CLAUDE\n");
    write("parent/ws/CLAUDE.local.md", "RULE-LOCAL\n");
  } else {
    write("parent/ws/AGENTS.md", "RULE-AGENTS\n");
  }
  return { root, home: join(root, "home"), workspace: join(root, "parent", "ws") };
}

/** The files whose contents the engine sent the model, in order, relative to the tree. */
async function headings(kind: Engine, withClaudeFiles: boolean): Promise<string[]> {
  const { root, home, workspace } = tree(withClaudeFiles);
  const api: FakeMessagesApi = await startFakeMessagesApi({ fallback: () => ({ text: "ok" }) });
  cleanups.push(() => api.close());
  const env = { ...oneShotEnv(kind, home, api.url), RUDDER_HOME: join(root, ".rudder") };
  const done = await runOneShot(kind, ["--output-format", "json", "hello"], {
    cwd: workspace,
    env,
  });
  expect(done.code, done.stderr).toBe(0);
  const body = JSON.stringify(api.mainRequests()[0]?.body);
  return [...body.matchAll(/Contents of (\S+) \(/g)]
    .map((match) => match[1] as string)
    .filter((path) => path.startsWith(root))
    .map((path) => path.slice(root.length + 1));
}

describe(".claude/rules as project instructions, paired with Claude Code 2.1.328", () => {
  it("loads the same rule files, in the same places, as claude -p", async () => {
    const [claude, rudder] = await Promise.all([
      headings("claude", true),
      headings("rudder", true),
    ]);
    expect(rulesAsSets(claude)).toEqual([
      "home/.claude/rules/a-user.md",
      "parent/.claude/rules/a-parent.md",
      "parent/ws/CLAUDE.md",
      "parent/ws/.claude/CLAUDE.md",
      "parent/ws/.claude/rules/a-plain.md",
      "parent/ws/.claude/rules/b-imports.md",
      "parent/ws/.claude/rules/c-extra.md",
      "parent/ws/.claude/rules/sub/a-nested.md",
      "parent/ws/CLAUDE.local.md",
    ]);
    expect(rulesAsSets(rudder)).toEqual(rulesAsSets(claude));
    expect(rudder.slice(4, 8)).toEqual([
      "parent/ws/.claude/rules/a-plain.md",
      "parent/ws/.claude/rules/b-imports.md",
      "parent/ws/.claude/rules/c-extra.md",
      "parent/ws/.claude/rules/sub/a-nested.md",
    ]);
  }, 200_000);

  it("reads AGENTS.md when the only project files are rules, as claude -p does", async () => {
    const [claude, rudder] = await Promise.all([
      headings("claude", false),
      headings("rudder", false),
    ]);
    expect(claude.at(-1)).toBe("parent/ws/AGENTS.md");
    expect(rulesAsSets(rudder)).toEqual(rulesAsSets(claude));
  }, 200_000);
});
