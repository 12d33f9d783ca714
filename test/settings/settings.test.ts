import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/agent/settings.js";

let root: string;
let home: string;
let cwd: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "rudder-settings-"));
  home = join(root, "home");
  cwd = join(root, "project");
  mkdirSync(home);
  mkdirSync(cwd);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, content: unknown): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

const userFile = () => join(home, ".rudder", "settings.json");
const projectFile = () => join(cwd, ".rudder", "settings.json");
const localFile = () => join(cwd, ".rudder", "settings.local.json");

function commandHook(command: string) {
  return { type: "command", command };
}

describe("loadSettings", () => {
  it("returns empty settings when no file exists", async () => {
    const loaded = await loadSettings({ cwd, home });
    expect(loaded).toEqual({
      settings: { permissions: { allow: [], ask: [], deny: [] }, hooks: {}, env: {} },
      sources: [],
      warnings: [],
      errors: [],
    });
  });

  it("merges user, project, local and --settings files in that order", async () => {
    write(userFile(), {
      permissions: { allow: ["Bash(npm test)"], deny: ["Read(./secrets/**)"] },
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [commandHook("user-hook")] }] },
      env: { SHARED: "user", USER_ONLY: "1" },
      model: "user-model",
    });
    write(projectFile(), {
      permissions: { allow: ["Bash(npm test)", "Edit"], ask: ["Bash(git push:*)"] },
      hooks: {
        PreToolUse: [{ matcher: "Edit|Write", hooks: [commandHook("project-hook")] }],
        Stop: [{ hooks: [commandHook("stop-hook")] }],
      },
      env: { SHARED: "project" },
    });
    write(localFile(), { env: { SHARED: "local", PORT: 8080 }, model: "local-model" });
    const explicit = write(join(root, "extra.json"), {
      permissions: { deny: ["Bash(curl:*)"] },
      model: "explicit-model",
    });

    const loaded = await loadSettings({ cwd, home, settingsFile: explicit });
    expect(loaded.errors).toEqual([]);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.sources).toEqual([userFile(), projectFile(), localFile(), explicit]);
    expect(loaded.settings).toEqual({
      permissions: {
        allow: ["Bash(npm test)", "Edit"],
        ask: ["Bash(git push:*)"],
        deny: ["Read(./secrets/**)", "Bash(curl:*)"],
      },
      hooks: {
        PreToolUse: [
          { matcher: "Bash", hooks: [commandHook("user-hook")] },
          { matcher: "Edit|Write", hooks: [commandHook("project-hook")] },
        ],
        Stop: [{ hooks: [commandHook("stop-hook")] }],
      },
      env: { SHARED: "local", USER_ONLY: "1", PORT: "8080" },
      model: "explicit-model",
    });
  });

  it("skips a file with bad JSON or a bad shape with a one-line warning naming it", async () => {
    write(userFile(), "{ not json");
    write(projectFile(), { permissions: { allow: "Bash" } });
    write(localFile(), { model: "still-used" });
    const loaded = await loadSettings({ cwd, home });
    expect(loaded.sources).toEqual([localFile()]);
    expect(loaded.settings.model).toBe("still-used");
    expect(loaded.warnings).toHaveLength(2);
    expect(loaded.warnings[0]).toMatch(
      new RegExp(`^${userFile()}: invalid JSON .*; file ignored$`),
    );
    expect(loaded.warnings[1]).toMatch(
      new RegExp(
        `^${projectFile()}: invalid settings \\(permissions\\.allow: .*\\); file ignored$`,
      ),
    );
    for (const warning of loaded.warnings) expect(warning).not.toContain("\n");
    expect(loaded.errors).toEqual([]);
  });

  it("rejects a command hook with neither command nor args", async () => {
    write(projectFile(), { hooks: { Stop: [{ hooks: [{ type: "command" }] }] } });
    const loaded = await loadSettings({ cwd, home });
    expect(loaded.sources).toEqual([]);
    expect(loaded.warnings[0]).toContain("hooks.Stop.0.hooks.0");
  });

  it("accepts the args form of a command hook", async () => {
    write(projectFile(), {
      hooks: {
        PostToolUse: [
          { matcher: "*", hooks: [{ type: "command", args: ["lint", "--fix"], timeout: 5 }] },
        ],
      },
    });
    const loaded = await loadSettings({ cwd, home });
    expect(loaded.settings.hooks.PostToolUse).toEqual([
      { matcher: "*", hooks: [{ type: "command", args: ["lint", "--fix"], timeout: 5 }] },
    ]);
  });

  it("reports a missing or broken --settings file as an error", async () => {
    const missing = await loadSettings({ cwd, home, settingsFile: "nope.json" });
    expect(missing.errors).toEqual([`${join(cwd, "nope.json")}: settings file not found`]);
    write(join(cwd, "broken.json"), "[1,");
    const broken = await loadSettings({ cwd, home, settingsFile: "broken.json" });
    expect(broken.errors).toEqual([expect.stringContaining("broken.json: invalid JSON")]);
    expect(broken.sources).toEqual([]);
  });

  it("accepts inline JSON for --settings, as Claude Code does", async () => {
    const loaded = await loadSettings({
      cwd,
      home,
      settingsFile: '{"permissions":{"allow":["Glob"]}}',
    });
    expect(loaded.sources).toEqual(["--settings (inline JSON)"]);
    expect(loaded.settings.permissions.allow).toEqual(["Glob"]);
  });

  it("takes an existing .claude/settings.json as is", async () => {
    const claudeSettings = write(join(cwd, ".claude", "settings.json"), {
      $schema: "https://json.schemastore.org/claude-code-settings.json",
      permissions: {
        allow: ["Bash(npm run test:*)", "Read(~/.zshrc)"],
        deny: ["Read(./.env)"],
        defaultMode: "acceptEdits",
        additionalDirectories: ["../docs"],
      },
      hooks: {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [
              {
                type: "command",
                command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh',
                timeout: 30,
              },
              { type: "prompt", prompt: "Is this safe?" },
            ],
          },
        ],
        SessionStart: [{ hooks: [commandHook("echo hello")] }],
        Notification: [{ matcher: "", hooks: [commandHook("notify-send done")] }],
      },
      env: { NODE_ENV: "test" },
      statusLine: { type: "command", command: "echo status" },
      includeCoAuthoredBy: false,
    });
    const loaded = await loadSettings({ cwd, home, settingsFile: ".claude/settings.json" });
    expect(loaded.errors).toEqual([]);
    expect(loaded.sources).toEqual([claudeSettings]);
    expect(loaded.settings).toEqual({
      permissions: {
        allow: ["Bash(npm run test:*)", "Read(~/.zshrc)"],
        ask: [],
        deny: ["Read(./.env)"],
      },
      hooks: {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [
              {
                type: "command",
                command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh',
                timeout: 30,
              },
            ],
          },
        ],
      },
      env: { NODE_ENV: "test" },
    });
    expect(loaded.warnings).toEqual([
      `${claudeSettings}: PreToolUse hook of type "prompt" is not supported and is ignored`,
      `${claudeSettings}: hooks for SessionStart are not supported by rudder and are ignored`,
      `${claudeSettings}: hooks for Notification are not supported by rudder and are ignored`,
    ]);
  });

  it("reads a file only once when home and the project are the same folder", async () => {
    write(projectFile(), { permissions: { allow: ["Edit"] } });
    const loaded = await loadSettings({ cwd, home: cwd });
    expect(loaded.sources).toEqual([projectFile()]);
  });
});
