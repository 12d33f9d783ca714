import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Finished } from "../helpers/owned-process.js";
import { runRudder } from "../helpers/rudder-cli.js";

let workspace: string;
let home: string;

beforeEach(() => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), "rudder-nocreds-")));
  home = mkdtempSync(join(tmpdir(), "rudder-nocreds-home-"));
});

afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** Runs the built CLI with no credentials in the environment at all. */
function rudder(args: string[], stdin = ""): Promise<Finished> {
  return runRudder(args, {
    cwd: workspace,
    env: { PATH: process.env.PATH, HOME: home, ANTHROPIC_API_KEY: "" },
    input: stdin,
  });
}

function expectNoCredentialsLine(result: Finished, command: string): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe("");
  const lines = result.stderr.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^rudder ${command}: `));
  expect(lines[0]).toContain("ANTHROPIC_API_KEY");
  expect(lines[0]).toContain("--model demo");
}

describe("without model credentials", () => {
  it("rudder run says so in one line, offers --model demo and exits 2", async () => {
    expectNoCredentialsLine(await rudder(["run", "hello"]), "run");
  });

  it("rudder chat says so in one line, offers --model demo and exits 2", async () => {
    expectNoCredentialsLine(await rudder(["chat"], "hello\n"), "chat");
  });

  it("rudder run --model demo works end to end, every reply labelled", async () => {
    writeFileSync(join(workspace, "README.md"), "# A project\n");
    const result = await rudder(["run", "--model", "demo", "show me around"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith("[demo model]")).toBe(true);
    expect(result.stdout).toContain("README.md");
    expect(result.stdout).toMatch(/background task bg_0001 completed/);
  });

  it("rudder chat --model demo shows the real tools at work, every reply labelled", async () => {
    writeFileSync(join(workspace, "README.md"), "# A project\n");
    const result = await rudder(["chat", "--model", "demo", "--wake"], "show me around\n");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("model demo");
    expect(result.stdout).toContain("  > glob");
    expect(result.stdout).toContain("  > read_file  README.md");
    expect(result.stdout).toContain("[bg_0001 completed]");
    const replies = result.stdout.split("\n").filter((line) => /^(> )?\[demo model\]/.test(line));
    expect(replies.length).toBeGreaterThanOrEqual(4);
  });
});
