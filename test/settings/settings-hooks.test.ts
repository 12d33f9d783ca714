import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/agent/settings.js";
import { createHookRunner } from "../../src/hooks/hook-registry.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "rudder-settings-hooks-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("hooks from an existing .claude/settings.json", () => {
  it("run unchanged against rudder's tools", async () => {
    const project = join(root, "project");
    mkdirSync(join(project, ".claude", "hooks"), { recursive: true });
    const script = join(project, ".claude", "hooks", "guard.sh");
    writeFileSync(
      script,
      [
        "#!/usr/bin/env bash",
        "input=$(cat)",
        'case "$input" in',
        '  *\'"tool_name":"Bash"\'*\'rm -rf\'*) echo "guard: no recursive rm" >&2; exit 2 ;;',
        "esac",
        'touch "$CLAUDE_PROJECT_DIR/guard-ran"',
      ].join("\n"),
    );
    chmodSync(script, 0o755);
    writeFileSync(
      join(project, ".claude", "settings.json"),
      JSON.stringify({
        hooks: {
          PreToolUse: [
            {
              matcher: "Bash",
              hooks: [{ type: "command", command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh' }],
            },
          ],
        },
      }),
    );
    const loaded = await loadSettings({
      cwd: project,
      home: join(root, "home"),
      settingsFile: ".claude/settings.json",
    });
    expect(loaded.errors).toEqual([]);
    const runner = createHookRunner({ cwd: project, commandHooks: loaded.settings.hooks });
    const signal = new AbortController().signal;
    const base = { session_id: "s", cwd: project, hook_event_name: "PreToolUse" as const };

    const denied = await runner.run(
      { ...base, tool_name: "bash", tool_input: { command: "rm -rf build" } },
      signal,
    );
    expect(denied).toMatchObject({
      blocked: true,
      permissionDecision: "deny",
      reason: "guard: no recursive rm",
    });

    const allowed = await runner.run(
      { ...base, tool_name: "bash", tool_input: { command: "ls" } },
      signal,
    );
    expect(allowed.blocked).toBe(false);
    expect(existsSync(join(project, "guard-ran"))).toBe(true);
  });
});
