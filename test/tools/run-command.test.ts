import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { liveProcessGroupCount } from "../../src/tools/process-groups.js";
import { runCommand } from "../../src/tools/run-command.js";
import { isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";

const cwd = mkdtempSync(join(tmpdir(), "rudder-run-command-"));
const started: number[] = [];

afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  rmSync(cwd, { recursive: true, force: true });
});

function pidsIn(output: string): number[] {
  const pids = [...output.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1]));
  started.push(...pids);
  return pids;
}

describe("runCommand", () => {
  it("merges stdout and stderr and reports the exit status", async () => {
    const result = await runCommand("echo out; echo err >&2; exit 7", { cwd, timeoutMs: 10_000 });
    expect(result.exitCode).toBe(7);
    expect(result.output).toContain("out\n");
    expect(result.output).toContain("err\n");
    expect(result).toMatchObject({
      timedOut: false,
      aborted: false,
      truncatedChars: 0,
      signal: null,
    });
  });

  it("runs in the given directory", async () => {
    const result = await runCommand("pwd -P", { cwd, timeoutMs: 10_000 });
    expect(result.output.trim()).toBe(cwd);
  });

  it("keeps head and tail of huge output and counts what was cut", async () => {
    const result = await runCommand(
      "printf 'HEAD'; head -c 1000000 /dev/zero | tr '\\0' 'a'; printf 'TAIL'",
      { cwd, timeoutMs: 20_000, maxOutputChars: 1000 },
    );
    expect(result.exitCode).toBe(0);
    expect(result.truncatedChars).toBe(1_000_008 - 1000);
    expect(result.output.startsWith("HEAD")).toBe(true);
    expect(result.output.endsWith("TAIL")).toBe(true);
    expect(result.output).toContain(`... [${1_000_008 - 1000} characters cut] ...`);
    expect(result.output.length).toBeLessThan(1100);
  });

  it("decodes UTF-8 split across chunks", async () => {
    const result = await runCommand(
      "for i in $(seq 1 20000); do printf '\\xc3\\xa9\\xf0\\x9f\\x98\\x80'; done",
      { cwd, timeoutMs: 20_000, maxOutputChars: 1_000_000 },
    );
    expect(result.output).toBe("\u00e9\u{1f600}".repeat(20000));
  });

  it("times out, killing the group", async () => {
    const result = await runCommand("echo pid=$$; sleep 30", { cwd, timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    const [pid] = pidsIn(result.output);
    await waitFor(() => !isAlive(pid!));
  });

  it("escalates to SIGKILL when the shell ignores SIGTERM", async () => {
    const result = await runCommand("trap '' TERM; echo pid=$$; while :; do sleep 1; done", {
      cwd,
      timeoutMs: 300,
    });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe("SIGKILL");
  });

  it("aborts through the signal and kills the group", async () => {
    const controller = new AbortController();
    const output: string[] = [];
    const pending = runCommand("sleep 30 & echo pid=$!; wait", {
      cwd,
      timeoutMs: 60_000,
      signal: controller.signal,
      onOutput: (chunk) => {
        output.push(chunk);
        if (output.join("").includes("\n")) controller.abort();
      },
    });
    const result = await pending;
    expect(result.aborted).toBe(true);
    const [pid] = pidsIn(result.output);
    await waitFor(() => !isAlive(pid!));
  });

  it("returns at once for an already aborted signal", async () => {
    const result = await runCommand("echo never", {
      cwd,
      timeoutMs: 1000,
      signal: AbortSignal.abort(),
    });
    expect(result).toMatchObject({ aborted: true, exitCode: null, output: "" });
  });

  it("kills a nohup grandchild when the command returns", async () => {
    const result = await runCommand("nohup sleep 30 >/dev/null 2>&1 & echo pid=$!", {
      cwd,
      timeoutMs: 10_000,
    });
    expect(result.exitCode).toBe(0);
    const [pid] = pidsIn(result.output);
    await waitFor(() => !isAlive(pid!));
  });

  it("does not wait for a background child that holds the pipes open", async () => {
    const began = Date.now();
    const result = await runCommand("nohup sleep 30 & echo pid=$!", { cwd, timeoutMs: 20_000 });
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(result.exitCode).toBe(0);
    const [pid] = pidsIn(result.output);
    await waitFor(() => !isAlive(pid!));
  });

  it("treats an unbounded or huge timeout as no timeout", async () => {
    for (const timeoutMs of [Number.POSITIVE_INFINITY, 2 ** 40]) {
      const result = await runCommand("echo ok", { cwd, timeoutMs });
      expect(result).toMatchObject({ exitCode: 0, timedOut: false, output: "ok\n" });
    }
  });

  it("turns a failure to start into a result", async () => {
    const result = await runCommand("echo hi", { cwd: join(cwd, "missing"), timeoutMs: 1000 });
    expect(result.exitCode).toBeNull();
    expect(result.output).toMatch(/ENOENT|no such file/i);
  });

  it("forgets every group once it is killed", async () => {
    await runCommand("true", { cwd, timeoutMs: 1000 });
    await waitFor(() => liveProcessGroupCount() === 0);
  });
});
