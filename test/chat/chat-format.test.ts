import { describe, expect, it } from "vitest";
import type { BackgroundTask } from "../../src/background/task.js";
import {
  describeTask,
  describeTaskEnd,
  describeTasks,
  describeToolCall,
  describeToolResult,
  oneLine,
  printable,
} from "../../src/cli/chat/chat-format.js";
import { formatElapsed, Spinner, spinnerFrame } from "../../src/cli/chat/spinner.js";

function task(fields: Partial<BackgroundTask>): BackgroundTask {
  return {
    id: "bg_0001",
    command: "npm test",
    toolUseId: "toolu_1",
    status: "running",
    exitCode: null,
    signal: null,
    timedOut: false,
    output: "",
    startedAt: 1_000,
    endedAt: null,
    delivered: false,
    ...fields,
  };
}

describe("chat formatting", () => {
  it("describes a tool call by its main input", () => {
    expect(describeToolCall("bash", { command: "npm test" })).toBe("  > bash  npm test");
    expect(describeToolCall("read_file", { path: "src/a.ts", offset: 3 })).toBe(
      "  > read_file  src/a.ts",
    );
    expect(describeToolCall("glob", { pattern: "**/*.ts" })).toBe("  > glob  **/*.ts");
    expect(describeToolCall("bash", { command: "sleep 9", run_in_background: true })).toBe(
      "  > bash  sleep 9 (background)",
    );
    expect(describeToolCall("mystery", { count: 3 })).toBe("  > mystery");
    expect(describeToolCall("mystery", { what: "x" })).toBe("  > mystery  x");
  });

  it("keeps a multi-line or long input on one line", () => {
    expect(describeToolCall("bash", { command: "echo a\necho b" })).toBe("  > bash  echo a ...");
    const long = oneLine("x".repeat(300));
    expect(long).toHaveLength(100);
    expect(long.endsWith("...")).toBe(true);
  });

  it("drops control characters from what the model and commands print", () => {
    expect(printable("red \u001b[31mtext\u001b[0m\r\nnext\tcol\u0007")).toBe(
      "red [31mtext[0m\nnext\tcol",
    );
    expect(describeToolResult("\u001b[2Jcleared", true)).toBe("  error: [2Jcleared");
  });

  it("describes a result by its line count or its first error line", () => {
    expect(describeToolResult("a\nb\nc\n", false)).toBe("  ok (3 lines)");
    expect(describeToolResult("one", false)).toBe("  ok (1 line)");
    expect(describeToolResult("", false)).toBe("  ok (0 lines)");
    expect(describeToolResult("Error: no such file\nmore", true)).toBe(
      "  error: Error: no such file ...",
    );
  });

  it("describes background tasks", () => {
    expect(describeTaskEnd("bg_0002", "failed", "exit 7")).toBe("[bg_0002 failed] exit 7");
    expect(describeTask(task({}), 3_500)).toMatch(/^ {2}bg_0001 {2}running +2\.5s {2}npm test$/);
    expect(describeTask(task({ status: "failed", exitCode: 7, endedAt: 2_000 }), 9_000)).toContain(
      "failed (exit 7)",
    );
    expect(describeTask(task({ status: "failed", timedOut: true, endedAt: 2_000 }))).toContain(
      "failed (timed out)",
    );
    expect(describeTask(task({ status: "completed", exitCode: 0, endedAt: 62_000 }))).toContain(
      "1m01s",
    );
    expect(describeTasks([])).toBe("  no background tasks");
  });

  it("formats elapsed time and spins through ASCII frames", () => {
    expect(formatElapsed(0)).toBe("0.0s");
    expect(formatElapsed(4_250)).toBe("4.2s");
    expect(formatElapsed(59_999)).toBe("59.9s");
    expect(formatElapsed(185_000)).toBe("3m05s");
    const frames = new Set([0, 100, 200, 300, 400].map((ms) => spinnerFrame(ms)));
    expect(frames).toEqual(new Set(["|", "/", "-", "\\"]));
  });

  it("a spinner reports its text on start and stops cleanly", () => {
    const ticks: string[] = [];
    const spinner = new Spinner((text) => ticks.push(text));
    expect(spinner.text()).toBe("");
    spinner.start("thinking");
    expect(spinner.active).toBe(true);
    expect(ticks[0]).toMatch(/^[|/\\-] thinking \d+\.\ds$/);
    spinner.stop();
    expect(spinner.active).toBe(false);
    expect(spinner.text()).toBe("");
  });
});
