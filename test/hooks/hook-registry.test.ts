import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHookRunner } from "../../src/hooks/hook-registry.js";
import type { HookInput, HooksConfig } from "../../src/hooks/types.js";
import { hookInput, makeTempDir, preToolUse, printJson } from "./helpers.js";

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

const signal = new AbortController().signal;

/** A command hook that leaves a file named `name` behind when it runs. */
function marker(name: string) {
  return { type: "command" as const, command: `touch "$CLAUDE_PROJECT_DIR/${name}"` };
}

function ran(name: string): boolean {
  return existsSync(join(temp.path, name));
}

describe("createHookRunner with command hooks", () => {
  it("runs hooks whose matcher selects the tool, by Claude Code's or rudder's name", async () => {
    const commandHooks: HooksConfig = {
      PreToolUse: [
        { matcher: "Bash", hooks: [marker("bash-matched")] },
        { matcher: "Edit|Write", hooks: [marker("edit-write-matched")] },
        { matcher: "*", hooks: [marker("star-matched")] },
        { matcher: "Read", hooks: [marker("read-matched")] },
      ],
    };
    const runner = createHookRunner({ cwd: temp.path, commandHooks });
    await runner.run(preToolUse(temp.path, "bash", { command: "ls" }), signal);
    expect([ran("bash-matched"), ran("edit-write-matched"), ran("star-matched")]).toEqual([
      true,
      false,
      true,
    ]);
    await runner.run(preToolUse(temp.path, "write_file", { path: "a", content: "" }), signal);
    expect(ran("edit-write-matched")).toBe(true);
    expect(ran("read-matched")).toBe(false);
  });

  it("merges several hooks: any block wins, reasons joined, deny beats ask beats allow", async () => {
    const runner = createHookRunner({
      cwd: temp.path,
      commandHooks: {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [
              { type: "command", command: "echo 'first says no' >&2; exit 2" },
              {
                type: "command",
                command: printJson({
                  hookSpecificOutput: { permissionDecision: "allow", additionalContext: "A" },
                }),
              },
              {
                type: "command",
                command: printJson({
                  hookSpecificOutput: {
                    permissionDecision: "deny",
                    permissionDecisionReason: "second says no",
                    additionalContext: "B",
                  },
                }),
              },
            ],
          },
        ],
      },
    });
    const outcome = await runner.run(preToolUse(temp.path, "bash", { command: "ls" }), signal);
    expect(outcome.blocked).toBe(true);
    expect(outcome.permissionDecision).toBe("deny");
    expect(outcome.reason).toBe("first says no\nsecond says no");
    expect(outcome.additionalContext).toEqual(["A", "B"]);
    expect(outcome.warnings).toEqual([]);
  });

  it("runs identical commands once", async () => {
    const counter = { type: "command" as const, command: 'echo x >> "$CLAUDE_PROJECT_DIR/count"' };
    const runner = createHookRunner({
      cwd: temp.path,
      commandHooks: {
        Stop: [{ hooks: [counter] }, { hooks: [counter] }],
        PreToolUse: [
          { matcher: "Bash", hooks: [counter] },
          { matcher: "*", hooks: [counter] },
        ],
      },
    });
    await runner.run(hookInput(temp.path, "Stop"), signal);
    expect(readFileSync(join(temp.path, "count"), "utf8")).toBe("x\n");
    await runner.run(preToolUse(temp.path, "bash", { command: "ls" }), signal);
    expect(readFileSync(join(temp.path, "count"), "utf8")).toBe("x\nx\n");
  });

  it("fills in the session id and warns about a matcher that is not a regex", async () => {
    const runner = createHookRunner({
      cwd: temp.path,
      sessionId: "from-options",
      commandHooks: {
        UserPromptSubmit: [
          { hooks: [{ type: "command", command: 'cat > "$CLAUDE_PROJECT_DIR/in.json"' }] },
        ],
        PreToolUse: [{ matcher: "Bash(", hooks: [marker("never")] }],
      },
    });
    await runner.run(
      hookInput(temp.path, "UserPromptSubmit", { session_id: "", prompt: "hi" }),
      signal,
    );
    const received = JSON.parse(readFileSync(join(temp.path, "in.json"), "utf8"));
    expect(received).toMatchObject({ session_id: "from-options", prompt: "hi" });
    const outcome = await runner.run(preToolUse(temp.path, "bash", { command: "ls" }), signal);
    expect(ran("never")).toBe(false);
    expect(outcome.warnings).toEqual([expect.stringContaining("not a valid regex")]);
  });

  it("returns an empty outcome when nothing matches", async () => {
    const runner = createHookRunner({ cwd: temp.path });
    const outcome = await runner.run(hookInput(temp.path, "Stop"), signal);
    expect(outcome).toEqual({ blocked: false, additionalContext: [], warnings: [] });
  });
});

describe("createHookRunner with in-process callbacks", () => {
  it("merges callbacks with command hooks, callbacks last", async () => {
    const runner = createHookRunner({
      cwd: temp.path,
      commandHooks: {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [
              {
                type: "command",
                command: printJson({
                  hookSpecificOutput: {
                    permissionDecision: "allow",
                    updatedInput: { command: "from command" },
                    additionalContext: "command context",
                  },
                }),
              },
            ],
          },
        ],
      },
    });
    const seen: HookInput[] = [];
    runner.on(
      "PreToolUse",
      (input) => {
        seen.push(input);
        return {
          permissionDecision: "ask",
          permissionDecisionReason: "check with the user",
          updatedInput: { command: "from callback" },
          additionalContext: ["callback context"],
        };
      },
      "Bash",
    );
    runner.on("PreToolUse", async () => ({ additionalContext: ["never"] }), "Read");
    const outcome = await runner.run(preToolUse(temp.path, "bash", { command: "ls" }), signal);
    expect(seen.map((input) => input.tool_name)).toEqual(["bash"]);
    expect(outcome).toEqual({
      blocked: false,
      permissionDecision: "ask",
      permissionDecisionReason: "check with the user",
      updatedInput: { command: "from callback" },
      additionalContext: ["command context", "callback context"],
      warnings: [],
    });
  });

  it("lets a Stop callback ask the loop to continue, and can be removed", async () => {
    const runner = createHookRunner({ cwd: temp.path });
    const remove = runner.on("Stop", (input) =>
      input.stop_hook_active ? undefined : { blocked: true, reason: "not done yet" },
    );
    const first = await runner.run(
      hookInput(temp.path, "Stop", { stop_hook_active: false }),
      signal,
    );
    expect(first).toMatchObject({ blocked: true, reason: "not done yet" });
    const second = await runner.run(
      hookInput(temp.path, "Stop", { stop_hook_active: true }),
      signal,
    );
    expect(second.blocked).toBe(false);
    remove();
    const third = await runner.run(
      hookInput(temp.path, "Stop", { stop_hook_active: false }),
      signal,
    );
    expect(third.blocked).toBe(false);
  });

  it("turns a throwing callback or a hung one into a warning", async () => {
    const runner = createHookRunner({ cwd: temp.path, defaultTimeoutSeconds: 0.2 });
    runner.on("UserPromptSubmit", () => {
      throw new Error("callback exploded");
    });
    runner.on("UserPromptSubmit", () => new Promise(() => {}));
    const outcome = await runner.run(
      hookInput(temp.path, "UserPromptSubmit", { prompt: "x" }),
      signal,
    );
    expect(outcome.blocked).toBe(false);
    expect(outcome.warnings).toEqual([
      expect.stringContaining("callback exploded"),
      expect.stringContaining("timed out after 0.2s"),
    ]);
  });
});
