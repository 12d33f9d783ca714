import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  INSTRUCTION_CHARACTER_CAP,
  loadProjectInstructions,
} from "../../src/agent/project-instructions.js";
import { importPaths } from "../../src/agent/project-instructions-imports.js";
import { projectInstructionsSection } from "../../src/agent/system-prompt.js";

let root: string;
let home: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-instructions-")));
  home = join(root, "home");
  mkdirSync(home);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function write(path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** The files loaded for `workspace` (relative to the temp root), as relative paths. */
function load(workspace: string): { files: string[]; texts: string[]; warnings: string[] } {
  mkdirSync(join(root, workspace), { recursive: true });
  const loaded = loadProjectInstructions({ workspace: join(root, workspace), home });
  const mine = loaded.files.filter((file) => file.path.startsWith(root));
  return {
    files: mine.map((file) => file.path.slice(root.length + 1)),
    texts: mine.map((file) => file.text),
    warnings: loaded.warnings.map((warning) => warning.replaceAll(`${root}/`, "")),
  };
}

describe("project instruction files", () => {
  it("reads the user's file, then every folder's from the top down to the workspace", () => {
    write("home/.claude/CLAUDE.md", "user");
    write("CLAUDE.md", "top");
    write("repo/CLAUDE.local.md", "repo local");
    write("repo/app/CLAUDE.md", "app");
    write("repo/app/.claude/CLAUDE.md", "app dot");
    write("repo/app/CLAUDE.local.md", "app local");
    write("repo/app/deeper/CLAUDE.md", "below the workspace: not read");
    const loaded = load("repo/app");
    expect(loaded.files).toEqual([
      "home/.claude/CLAUDE.md",
      "CLAUDE.md",
      "repo/CLAUDE.local.md",
      "repo/app/CLAUDE.md",
      "repo/app/.claude/CLAUDE.md",
      "repo/app/CLAUDE.local.md",
    ]);
    expect(loaded.warnings).toEqual([]);
    const full = loadProjectInstructions({ workspace: join(root, "repo/app"), home });
    expect(full.files.map((file) => file.scope).filter((_, index) => index < 1)).toEqual(["user"]);
    expect(full.files.find((file) => file.path.endsWith("app/CLAUDE.local.md"))?.scope).toBe(
      "local",
    );
  });

  it("reads AGENTS.md only when no folder up the tree has a CLAUDE file", () => {
    write("home/.claude/CLAUDE.md", "the user's file does not count");
    write("plain/AGENTS.md", "plain agents");
    write("plain/sub/AGENTS.md", "sub agents");
    expect(load("plain/sub").files).toEqual([
      "home/.claude/CLAUDE.md",
      "plain/AGENTS.md",
      "plain/sub/AGENTS.md",
    ]);
    write("mixed/CLAUDE.md", "mixed claude");
    write("mixed/sub/AGENTS.md", "ignored: the project has a CLAUDE.md");
    expect(load("mixed/sub").files).toEqual(["home/.claude/CLAUDE.md", "mixed/CLAUDE.md"]);
    write("local/CLAUDE.local.md", "local only");
    write("local/AGENTS.md", "ignored too");
    expect(load("local").files).toEqual(["home/.claude/CLAUDE.md", "local/CLAUDE.local.md"]);
  });

  it("follows @imports relative to the importing file, each after its importer, once", () => {
    write(
      "ws/CLAUDE.md",
      "Rules. See @docs/style.md and @./docs/style.md again.\nAlso @/ABSOLUTE\n",
    );
    write("ws/docs/style.md", "style\n@nested/more.md\n");
    write("ws/docs/nested/more.md", "more\n@../style.md\n@../../CLAUDE.md\n");
    write("ABSOLUTE", "outside");
    const loaded = load("ws");
    expect(loaded.files).toEqual(["ws/CLAUDE.md", "ws/docs/style.md", "ws/docs/nested/more.md"]);
    expect(loaded.warnings).toEqual(["ws/CLAUDE.md: imported file @/ABSOLUTE not found"]);
  });

  it("ignores @paths in code spans and fenced blocks", () => {
    expect(
      importPaths(
        [
          "Use `@span.md` and ``@double.md`` as examples, but read @real.md.",
          "```sh",
          "@fenced.md",
          "```",
          "~~~~",
          "@tilde-fenced.md",
          "~~~",
          "@still-fenced.md",
          "~~~~",
          "mail me at someone@example.com, or @@not, or @ alone; @after.md",
          "@with\\ space.md",
        ].join("\n"),
      ),
    ).toEqual(["real.md", "after.md", "with space.md"]);
  });

  it("warns about a missing import, a chain deeper than 5 and a file over the cap", () => {
    write("ws/CLAUDE.md", "@missing.md\n@d1.md\n@big.md\n");
    for (let depth = 1; depth <= 6; depth++)
      write(`ws/d${depth}.md`, `level ${depth}\n@d${depth + 1}.md`);
    write("ws/d7.md", "too deep");
    write("ws/big.md", `${"x".repeat(INSTRUCTION_CHARACTER_CAP)}TAIL`);
    const loaded = load("ws");
    expect(loaded.files).toEqual([
      "ws/CLAUDE.md",
      "ws/d1.md",
      "ws/d2.md",
      "ws/d3.md",
      "ws/d4.md",
      "ws/d5.md",
      "ws/big.md",
    ]);
    expect(loaded.warnings).toEqual([
      "ws/CLAUDE.md: imported file @missing.md not found",
      "ws/d5.md: @d6.md not loaded: imports nest at most 5 deep",
      "ws/big.md is over 40,000 characters; only its start is loaded",
    ]);
    expect(loaded.texts.at(-1)).toHaveLength(INSTRUCTION_CHARACTER_CAP);
  });

  it("refuses a project file's import that leads outside its folder, also through a symlink", () => {
    write("secret.txt", "private key");
    write("ws/CLAUDE.md", "@../secret.txt\n@link.txt\n@inside.md\n");
    write("ws/inside.md", "inside");
    symlinkSync(join(root, "secret.txt"), join(root, "ws/link.txt"));
    const loaded = load("ws");
    expect(loaded.files).toEqual(["ws/CLAUDE.md", "ws/inside.md"]);
    expect(loaded.warnings).toEqual([
      "ws/CLAUDE.md: @../secret.txt not loaded: it is outside ws",
      "ws/CLAUDE.md: @link.txt not loaded: it is outside ws",
    ]);
  });

  it("lets the user's own file import from anywhere, ~/ meaning the home folder", () => {
    write("home/notes.md", "the user's own notes");
    write("shared.md", "shared");
    write("home/.claude/CLAUDE.md", "@~/notes.md\n@../../shared.md");
    expect(load("ws").files).toEqual(["home/.claude/CLAUDE.md", "home/notes.md", "shared.md"]);
  });

  it("reads a file once when the home folder is also a parent of the workspace", () => {
    write("home/.claude/CLAUDE.md", "user");
    write("home/project/CLAUDE.md", "project");
    const loaded = load("home/project");
    expect(loaded.files).toEqual(["home/.claude/CLAUDE.md", "home/project/CLAUDE.md"]);
  });

  it("renders each file under Claude Code's heading", () => {
    const section = projectInstructionsSection([
      { path: "/p/CLAUDE.md", scope: "project", text: "Use tabs.\n" },
      { path: "/p/CLAUDE.local.md", scope: "local", text: "Call me Sam." },
    ]);
    expect(section).toContain(
      "Contents of /p/CLAUDE.md (project instructions, checked into the codebase):\n\nUse tabs.",
    );
    expect(section).toContain(
      "Contents of /p/CLAUDE.local.md (user's private project instructions, not checked in):",
    );
    expect(projectInstructionsSection([])).toBe("");
  });
});
