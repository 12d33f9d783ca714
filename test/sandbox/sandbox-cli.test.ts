/**
 * The sandbox through `rudder run`, with the real bubblewrap: a SIGKILLed
 * agent takes its commands with it, `system/init` says whether the sandbox
 * is on, `--no-sandbox` turns it off, and a missing or broken bubblewrap is
 * said in one line and handled as configured.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findExecutable } from "../../src/sandbox/bubblewrap-probe.js";
import { processesMatching } from "../helpers/process-scan.js";
import { waitFor } from "../helpers/wait-for.js";
import { rudderFixture } from "./rudder-fixture.js";
import { NO_BUBBLEWRAP } from "./sandbox-helpers.js";

const fixture = rudderFixture("rudder-sandbox-cli-");
const { rudder } = fixture;
let outside: string;

beforeEach(() => {
  outside = realpathSync(mkdtempSync("/var/tmp/rudder-sandbox-cli-"));
});

afterEach(() => {
  rmSync(outside, { recursive: true, force: true });
});

/** A PATH holding only bash, and `bwrap` when given: a machine without (or with a broken) bubblewrap. */
function pathWithout(bubblewrap?: string): string {
  const bin = join(fixture.root, "bin");
  mkdirSync(bin);
  symlinkSync(findExecutable("bash", process.env.PATH) as string, join(bin, "bash"));
  if (bubblewrap !== undefined) {
    writeFileSync(join(bin, "bwrap"), bubblewrap);
    chmodSync(join(bin, "bwrap"), 0o755);
  }
  return bin;
}

/** The tool results of the conversation, as the last request to the model carried them. */
function toolResults(): string[] {
  return (fixture.api.mainRequests().at(-1)?.body.messages ?? [])
    .flatMap((message: { content: unknown }) =>
      Array.isArray(message.content) ? message.content : [],
    )
    .filter((block: { type: string }) => block.type === "tool_result")
    .map((block: { content: unknown }) => JSON.stringify(block.content));
}

function initLine(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.split("\n")[0] ?? "{}");
}

describe.skipIf(NO_BUBBLEWRAP !== undefined)(`rudder run's sandbox ${NO_BUBBLEWRAP ?? ""}`, () => {
  it("SIGKILL of the agent mid-command leaves no process of it alive and no side effect after", async () => {
    fixture.api.push({
      toolUse: [
        {
          name: "bash",
          input: { command: "sleep 2.469 && echo late > bg-late.txt", run_in_background: true },
        },
        { name: "bash", input: { command: "sleep 2.468 && echo late > late.txt" } },
      ],
    });
    const run = rudder(["run", "start the slow work"]);
    await waitFor(
      () =>
        processesMatching("sleep 2.468").length > 0 && processesMatching("sleep 2.469").length > 0,
      "both sleeps",
      15_000,
    );
    run.child.kill("SIGKILL");
    expect((await run.exited).signal).toBe("SIGKILL");
    // Nothing of either command survives, so nothing can write later.
    await waitFor(
      () =>
        processesMatching("sleep 2.468").length === 0 &&
        processesMatching("sleep 2.469").length === 0,
      "both sleeps to be gone",
      5000,
    );
    expect(existsSync(join(fixture.workspace, "late.txt"))).toBe(false);
    expect(existsSync(join(fixture.workspace, "bg-late.txt"))).toBe(false);
  });

  it("system/init says the sandbox is on; --no-sandbox turns it off", async () => {
    fixture.api.push({ toolUse: { name: "Bash", input: { command: `touch ${outside}/on` } } });
    const on = rudder(["run", "--output-format", "stream-json", "--verbose", "go"]);
    await on.exited;
    expect(initLine(on.stdout()).sandbox).toEqual({ enabled: true, status: "on", network: "none" });
    expect(toolResults().join("\n")).toContain("Read-only file system");
    expect(existsSync(join(outside, "on"))).toBe(false);

    fixture.api.push({ toolUse: { name: "Bash", input: { command: `touch ${outside}/off` } } });
    // Unconfined, a write is asked about (headless: denied) unless an allow rule covers it.
    const off = rudder([
      "run",
      "--no-sandbox",
      "--allowedTools",
      "Bash(touch:*)",
      "--output-format",
      "stream-json",
      "--verbose",
      "go",
    ]);
    await off.exited;
    expect(initLine(off.stdout()).sandbox).toEqual({
      enabled: false,
      status: "off",
      network: "none",
    });
    expect(existsSync(join(outside, "off"))).toBe(true);
  });

  it("without bubblewrap says so in one line, and refuses to start with failIfUnavailable", async () => {
    const bin = pathWithout();
    fixture.api.push({ toolUse: { name: "Bash", input: { command: "echo plain" } } });
    const warned = rudder(["run", "--output-format", "stream-json", "--verbose", "go"], {
      PATH: bin,
    });
    await warned.exited;
    expect(warned.stderr()).toContain(
      "rudder: the sandbox is unavailable (bubblewrap (bwrap) is not installed): bash commands run unconfined",
    );
    expect(initLine(warned.stdout()).sandbox).toMatchObject({
      enabled: false,
      status: "unavailable",
    });

    mkdirSync(join(fixture.workspace, ".rudder"));
    writeFileSync(
      join(fixture.workspace, ".rudder", "settings.json"),
      JSON.stringify({ sandbox: { failIfUnavailable: true } }),
    );
    const refused = rudder(["run", "go"], { PATH: bin });
    const { code } = await refused.exited;
    expect(code).not.toBe(0);
    expect(refused.stderr().trim()).toMatch(
      /the sandbox is unavailable \(bubblewrap \(bwrap\) is not installed\) and sandbox.failIfUnavailable is set/,
    );
  });

  it("a bubblewrap that cannot start: the command judged sandboxed is not run, later ones meet the strict gate", async () => {
    // Slow to fail, so the gate judges the first command before the probe (started as the model
    // is asked) has answered.
    const bin = pathWithout(
      "#!/bin/sh\n/bin/sleep 2\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
    );
    fixture.api.push(
      { toolUse: { name: "bash", input: { command: "echo first > first.txt" } } },
      { toolUse: { name: "bash", input: { command: "echo second > second.txt" } } },
      { toolUse: { name: "bash", input: { command: "echo third" } } },
    );
    const run = rudder(["run", "go"], { PATH: bin });
    await run.exited;
    const [first, second, third] = toolResults();
    expect(first).toContain(
      "the sandbox cannot start (bubblewrap cannot start a sandbox here: bwrap: No permissions to create new namespace), so this command was not run",
    );
    expect(existsSync(join(fixture.workspace, "first.txt"))).toBe(false);
    // Unconfined now: a write is not known read-only, so headless it is refused; echo runs.
    expect(existsSync(join(fixture.workspace, "second.txt"))).toBe(false);
    expect(second).not.toContain("the sandbox cannot start");
    expect(third).toContain("third");
    expect(run.stderr().match(/the sandbox is unavailable/g)).toHaveLength(1);
  });

  it("a bubblewrap that cannot start, found out while the model answers: the first command meets the strict gate", async () => {
    const bin = pathWithout(
      "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
    );
    fixture.api.push(
      {
        delayMs: 1500,
        // biome-ignore lint/suspicious/noThenProperty: the fake API names its delayed step so
        then: { toolUse: { name: "bash", input: { command: "echo first > first.txt" } } },
      },
      { toolUse: { name: "bash", input: { command: "echo second" } } },
    );
    const run = rudder(["run", "go"], { PATH: bin });
    await run.exited;
    const [first, second] = toolResults();
    expect(first).not.toContain("the sandbox cannot start");
    expect(existsSync(join(fixture.workspace, "first.txt"))).toBe(false);
    expect(second).toContain("second");
    expect(run.stderr().match(/the sandbox is unavailable/g)).toHaveLength(1);
  });

  it("starts the sandbox while the model answers, and ends it with the run", async () => {
    fixture.api.push({ hangUntilAborted: true });
    const run = rudder(["run", "--output-format", "stream-json", "--verbose", "go"]);
    const bubblewraps = () => processesMatching(`--chdir ${fixture.workspace}`);
    // Still waiting for the model's first reply, and the sandbox is already up.
    await fixture.api.waitForMainRequests(1, 15_000);
    await waitFor(() => bubblewraps().length > 0, "bubblewrap to start", 15_000);
    run.child.kill("SIGTERM");
    await run.exited;
    await waitFor(() => bubblewraps().length === 0, "bubblewrap to be gone", 10_000);
  });

  it("starts no sandbox when bash is denied", async () => {
    // The sandbox would be spawned as soon as the first request is out (the warm-up, no proxy
    // to wait for), so by the second request, a tool call and its result later, it would be
    // there: the run is still waiting for the model's reply, the sandbox not yet ended.
    fixture.api.push({ toolUse: [{ name: "glob", input: { pattern: "*" } }] });
    fixture.api.push({ hangUntilAborted: true });
    const run = rudder(["run", "--disallowedTools", "Bash", "go"]);
    const [request] = await fixture.api.waitForMainRequests(2, 15_000);
    expect(request?.body.tools.map((tool: { name: string }) => tool.name)).not.toContain("Bash");
    expect(processesMatching(`--chdir ${fixture.workspace}`)).toEqual([]);
    run.child.kill("SIGTERM");
    await run.exited;
  });
});
