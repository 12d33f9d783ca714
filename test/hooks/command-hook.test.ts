import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCommandHook } from "../../src/hooks/command-hook.js";
import type { CommandHookConfig, HookInput } from "../../src/hooks/types.js";
import { groupIsAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";
import { hookInput, makeTempDir, preToolUse, printJson } from "./helpers.js";

let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

function run(hook: CommandHookConfig, input: HookInput, signal = new AbortController().signal) {
  return runCommandHook(hook, input, { cwd: temp.path, signal });
}

function command(text: string, timeout?: number): CommandHookConfig {
  return { type: "command", command: text, ...(timeout === undefined ? {} : { timeout }) };
}

describe("runCommandHook exit codes", () => {
  it("blocks with stderr as the reason when the hook exits 2", async () => {
    const outcome = await run(
      command("echo 'no rm here' >&2; exit 2"),
      preToolUse(temp.path, "bash", { command: "rm x" }),
    );
    expect(outcome.blocked).toBe(true);
    expect(outcome.reason).toBe("no rm here");
  });

  it("turns another non-zero exit into a warning with the stderr tail", async () => {
    const outcome = await run(
      command("echo 'broken hook' >&2; exit 3"),
      preToolUse(temp.path, "bash", { command: "ls" }),
    );
    expect(outcome.blocked).toBeUndefined();
    expect(outcome.warnings).toEqual([
      expect.stringContaining("exited with status 3: broken hook"),
    ]);
  });

  it("reports a program that cannot start", async () => {
    const outcome = await run(
      { type: "command", args: [join(temp.path, "missing-program")] },
      preToolUse(temp.path, "bash", { command: "ls" }),
    );
    expect(outcome.warnings?.[0]).toMatch(/could not start/);
  });
});

describe("runCommandHook JSON answers", () => {
  it.each([
    ["deny", true],
    ["ask", undefined],
    ["allow", undefined],
  ] as const)("reads permissionDecision %s", async (decision, blocked) => {
    const outcome = await run(
      command(
        printJson({
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: decision,
            permissionDecisionReason: `said ${decision}`,
          },
        }),
      ),
      preToolUse(temp.path, "bash", { command: "ls" }),
    );
    expect(outcome.permissionDecision).toBe(decision);
    expect(outcome.permissionDecisionReason).toBe(`said ${decision}`);
    expect(outcome.blocked).toBe(blocked);
    if (decision === "deny") expect(outcome.reason).toBe("said deny");
  });

  it("reads the legacy top-level decision", async () => {
    const approve = await run(
      command(printJson({ decision: "approve", reason: "fine" })),
      preToolUse(temp.path, "bash", { command: "ls" }),
    );
    expect(approve.permissionDecision).toBe("allow");
    const block = await run(
      command(printJson({ decision: "block", reason: "not today" })),
      preToolUse(temp.path, "bash", { command: "ls" }),
    );
    expect(block).toMatchObject({ blocked: true, reason: "not today", permissionDecision: "deny" });
  });

  it("returns updatedInput, mapping Claude Code field names back to rudder's", async () => {
    const bash = await run(
      command(printJson({ hookSpecificOutput: { updatedInput: { command: "echo safe" } } })),
      preToolUse(temp.path, "bash", { command: "echo unsafe" }),
    );
    expect(bash.updatedInput).toEqual({ command: "echo safe" });

    const edit = await run(
      command(
        printJson({
          hookSpecificOutput: {
            updatedInput: { file_path: "b.txt", old_string: "x", new_string: "z" },
          },
        }),
      ),
      preToolUse(temp.path, "edit_file", { path: "a.txt", old_text: "x", new_text: "y" }),
    );
    expect(edit.updatedInput).toEqual({ path: "b.txt", old_text: "x", new_text: "z" });
  });

  it("collects additionalContext", async () => {
    const outcome = await run(
      command(
        printJson({
          hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "lint ok" },
        }),
      ),
      hookInput(temp.path, "PostToolUse", { tool_name: "bash", tool_input: { command: "ls" } }),
    );
    expect(outcome.additionalContext).toEqual(["lint ok"]);
  });

  it("takes plain stdout of a UserPromptSubmit hook as context", async () => {
    const outcome = await run(
      command("echo 'branch: main'"),
      hookInput(temp.path, "UserPromptSubmit", { prompt: "hello" }),
    );
    expect(outcome.additionalContext).toEqual(["branch: main"]);
  });

  it("ignores plain stdout of other events", async () => {
    const outcome = await run(
      command("echo 'just chatter'"),
      preToolUse(temp.path, "bash", { command: "ls" }),
    );
    expect(outcome).toEqual({});
  });

  it("warns about bad JSON and about JSON of the wrong shape", async () => {
    const bad = await run(
      command("echo '{not json'"),
      preToolUse(temp.path, "bash", { command: "ls" }),
    );
    expect(bad.blocked).toBeUndefined();
    expect(bad.warnings).toEqual([expect.stringContaining("invalid JSON")]);
    const shape = await run(
      command(printJson({ decision: "maybe" })),
      preToolUse(temp.path, "bash", { command: "ls" }),
    );
    expect(shape.warnings).toEqual([expect.stringContaining("wrong shape (decision:")]);
    for (const [output, path] of [
      [{ hookSpecificOutput: [] }, "hookSpecificOutput"],
      [{ hookSpecificOutput: { updatedInput: ["rm", "-rf"] } }, "hookSpecificOutput.updatedInput"],
    ] as const) {
      const array = await run(
        command(printJson(output)),
        preToolUse(temp.path, "bash", { command: "ls" }),
      );
      expect(array.updatedInput).toBeUndefined();
      expect(array.warnings).toEqual([
        expect.stringContaining(`wrong shape (${path}: Invalid type: Expected Object`),
      ]);
    }
  });

  it("lets a Stop hook block with a reason and a hook halt with continue:false", async () => {
    const stop = await run(
      command(printJson({ decision: "block", reason: "run the tests first" })),
      hookInput(temp.path, "Stop", { stop_hook_active: false }),
    );
    expect(stop).toMatchObject({ blocked: true, reason: "run the tests first" });
    expect(stop.permissionDecision).toBeUndefined();
    const halt = await run(
      command(printJson({ continue: false, stopReason: "budget spent" })),
      hookInput(temp.path, "PostToolUse", { tool_name: "bash", tool_input: { command: "ls" } }),
    );
    expect(halt.halt).toEqual({ reason: "budget spent" });
  });
});

describe("runCommandHook input and isolation", () => {
  it("writes Claude Code's JSON on stdin and sets the project directory", async () => {
    const outcome = await run(
      command(
        'cat > "$CLAUDE_PROJECT_DIR/stdin.json"; printf %s "$RUDDER_PROJECT_DIR" > "$CLAUDE_PROJECT_DIR/dir.txt"',
      ),
      {
        ...preToolUse(temp.path, "write_file", { path: "notes/a.txt", content: "hi" }),
        transcript_path: "/tmp/transcript.jsonl",
        tool_use_id: "toolu_1",
      },
    );
    expect(outcome).toEqual({});
    const stdin = readFileSync(join(temp.path, "stdin.json"), "utf8");
    expect(stdin.endsWith("\n")).toBe(true);
    expect(JSON.parse(stdin)).toEqual({
      session_id: "session-1",
      transcript_path: "/tmp/transcript.jsonl",
      cwd: temp.path,
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool_input: {
        path: "notes/a.txt",
        content: "hi",
        file_path: join(temp.path, "notes/a.txt"),
      },
      tool_use_id: "toolu_1",
    });
    expect(readFileSync(join(temp.path, "dir.txt"), "utf8")).toBe(temp.path);
  });

  it("sends stop_hook_active and prompt for their events", async () => {
    await run(command('cat > "$CLAUDE_PROJECT_DIR/stop.json"'), hookInput(temp.path, "Stop"));
    expect(JSON.parse(readFileSync(join(temp.path, "stop.json"), "utf8"))).toEqual({
      session_id: "session-1",
      cwd: temp.path,
      hook_event_name: "Stop",
      stop_hook_active: false,
    });
  });

  it("never executes shell metacharacters in the tool input", async () => {
    const hostile = '$(touch pwned) `touch pwned2`; touch pwned3 | touch pwned4 && touch "pwned5"';
    await run(
      command('cat > "$CLAUDE_PROJECT_DIR/stdin.json"'),
      preToolUse(temp.path, "bash", { command: hostile }),
    );
    const received = JSON.parse(readFileSync(join(temp.path, "stdin.json"), "utf8"));
    expect(received.tool_input.command).toBe(hostile);
    for (const name of ["pwned", "pwned2", "pwned3", "pwned4", "pwned5"]) {
      expect(existsSync(join(temp.path, name))).toBe(false);
    }
  });

  it("runs the args form without a shell", async () => {
    const literal = "$(touch pwned); echo `id` > also-pwned";
    const outcome = await run(
      {
        type: "command",
        args: [
          process.execPath,
          "-e",
          "require('node:fs').writeFileSync(process.argv[1], process.argv[2])",
          join(temp.path, "argument.txt"),
          literal,
        ],
      },
      preToolUse(temp.path, "bash", { command: "ls" }),
    );
    expect(outcome).toEqual({});
    expect(readFileSync(join(temp.path, "argument.txt"), "utf8")).toBe(literal);
    expect(existsSync(join(temp.path, "pwned"))).toBe(false);
    expect(existsSync(join(temp.path, "also-pwned"))).toBe(false);
  });

  it("kills a hook that hangs at its timeout, with its whole process group", async () => {
    const hanging = 'echo $$ > "$CLAUDE_PROJECT_DIR/pid"; sleep 30 & sleep 30';
    const outcome = await run(
      command(hanging, 3),
      preToolUse(temp.path, "bash", { command: "ls" }),
    );
    expect(outcome.warnings).toEqual([`hook "${hanging}" timed out after 3s`]);
    const pid = Number(readFileSync(join(temp.path, "pid"), "utf8"));
    await waitFor(() => !groupIsAlive(pid));
  });

  it("kills a running hook when the signal aborts", async () => {
    const controller = new AbortController();
    const pending = run(
      command('echo $$ > "$CLAUDE_PROJECT_DIR/pid"; sleep 30'),
      preToolUse(temp.path, "bash", { command: "ls" }),
      controller.signal,
    );
    const pidFile = join(temp.path, "pid");
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"));
    controller.abort();
    const outcome = await pending;
    expect(outcome.warnings).toEqual([expect.stringContaining("was cancelled")]);
    const pid = Number(readFileSync(pidFile, "utf8"));
    await waitFor(() => !groupIsAlive(pid));
  });
});
