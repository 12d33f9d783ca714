/**
 * The agent spawner (src/claude-cli/spawner/): agents started by a process of its own, their
 * pipes handed back. Real processes throughout: the spawner, the fake Claude CLI, shells that
 * ignore SIGTERM, and a host process SIGKILLed as a gateway would be. The spawner is the built
 * one (`npm run build`), as `rudder serve` runs it: from source it would load through tsx.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaudeProcess } from "../../src/claude-cli/claude-process.js";
import { listDescendants } from "../../src/claude-cli/process-tree.js";
import { AgentSpawner } from "../../src/claude-cli/spawner/agent-spawner.js";
import { killLiveChildren, terminateProcessTree } from "../../src/claude-cli/terminate.js";
import { FAKE_CLAUDE, RUDDER_SPAWNER } from "../helpers/fixtures.js";
import { outputMatching, startProcess } from "../helpers/owned-process.js";
import { groupIsAlive, isAlive } from "../helpers/process-state.js";
import { waitFor } from "../helpers/wait-for.js";

/** A field of /proc/<pid>/stat after the command name (0: state, 1: parent, 16: niceness). */
function statField(pid: number, index: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[index]);
}

function parentOf(pid: number): number {
  return statField(pid, 1);
}

/** A shell that ignores SIGTERM (and so do its two sleeps), one sleep in a session of its own. */
const STUBBORN = ["/bin/sh", "-c", 'trap "" TERM; setsid sleep 60 & sleep 60 & echo up; wait'];

const log: string[] = [];
/** A spawner as `rudder serve` makes one, with a short grace for what ignores SIGTERM. */
function builtSpawner(): AgentSpawner {
  return new AgentSpawner({
    log: (line) => log.push(line),
    command: [process.execPath, RUDDER_SPAWNER],
    graceMs: 300,
  });
}
const spawner = builtSpawner();
const processes: ClaudeProcess[] = [];

function agent(scenario: string, over: AgentSpawner = spawner): ClaudeProcess {
  const made = new ClaudeProcess("spawned", {
    claudeBin: FAKE_CLAUDE,
    terminateGraceMs: 500,
    niceness: 7,
    env: { FAKE_CLAUDE_SCENARIO: scenario },
    spawner: over,
  });
  processes.push(made);
  return made;
}

beforeAll(async () => {
  // The spawner starts with the first agent; the tests below then share it.
  const first = agent("normal");
  expect((await first.runTurn("warm up")).isError).toBe(false);
});

afterAll(async () => {
  await Promise.all(processes.map((made) => made.stop()));
  await spawner.close();
});

describe("agents started by the spawner", () => {
  it("are the spawner's children, at the niceness asked; their output, stderr and exit reach the host", async () => {
    const normal = agent("normal");
    const result = await normal.runTurn("hello there");
    expect(result.isError).toBe(false);
    expect(result.result).toContain("hello there");
    const pid = normal.pid as number;
    expect(parentOf(pid)).toBe(spawner.pid);
    expect(statField(pid, 16)).toBe(7);
    await normal.stop();
    expect(isAlive(pid)).toBe(false);

    const crashing = agent("generic_error");
    const failed = await crashing.runTurn("fail please");
    expect(failed.isError).toBe(true);
    const missing = new ClaudeProcess("missing", { claudeBin: "/no/such/claude", spawner });
    const notStarted = await missing.runTurn("anyone?");
    expect(notStarted.isError).toBe(true);
    expect(notStarted.result).toMatch(/ENOENT|not found/);
  });

  it("are killed by group: SIGTERM ignored, then SIGKILL takes the group and what left it", async () => {
    const child = spawner.spawn(STUBBORN, { cwd: undefined, env: { PATH: "/usr/bin:/bin" } });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    await waitFor(() => output.includes("up"), "the shell to start its sleeps");
    const pid = child.pid as number;
    const descendants = await waitFor(() => {
      const found = listDescendants(pid);
      return found.length >= 2 && found;
    }, "both sleeps");
    await terminateProcessTree(child, 300);
    expect(child.exitCode !== null || child.signalCode !== null).toBe(true);
    // SIGKILL has been sent; the processes end (and init reaps them) a moment later.
    await waitFor(
      () => !groupIsAlive(pid) && descendants.every(({ pid: descendant }) => !isAlive(descendant)),
      "the group and the sleep in its own session to be gone",
    );
  });

  it("are ended by killLiveChildren (each test file's end) while the spawner still starts them", async () => {
    const hanging = agent("timeout");
    const running = hanging.runTurn("hang");
    // Asked of the spawner, not started yet: no pid.
    expect(hanging.pid).toBeUndefined();
    expect(killLiveChildren()).toBeGreaterThanOrEqual(1);
    const pid = await waitFor(() => hanging.pid, "the spawner to report the agent's start");
    expect((await running).isError).toBe(true);
    await waitFor(() => !groupIsAlive(pid), "the agent started after the kill to be gone");
  });
});

describe("when the spawner dies", () => {
  it("reports the agents under it as ended, and the next start gets a new spawner", async () => {
    const own = builtSpawner();
    try {
      const held = agent("hold", own);
      let started = false;
      const turn = held.runTurn("wait for it", { onStarted: () => (started = true) });
      await waitFor(() => started, "the held turn to start");
      const first = own.pid as number;
      const pid = held.pid as number;
      process.kill(first, "SIGKILL");
      const result = await turn;
      expect(result.isError).toBe(true);
      await waitFor(() => !isAlive(pid), "the agent to be gone");
      expect(log.some((line) => line.includes("agent spawner exited"))).toBe(true);

      const next = await agent("normal", own).runTurn("again");
      expect(next.result).toContain("again");
      expect(own.pid).toBeDefined();
      expect(own.pid).not.toBe(first);
    } finally {
      await own.close();
    }
  });

  it("one that cannot start is given up with one log line: agents are spawned directly", async () => {
    const lines: string[] = [];
    const broken = new AgentSpawner({
      log: (line) => lines.push(line),
      command: [process.execPath, "-e", "process.exit(3)"],
    });
    const first = agent("normal", broken);
    const second = agent("normal", broken);
    const [one, two] = await Promise.all([first.runTurn("one"), second.runTurn("two")]);
    expect(one.result).toContain("one");
    expect(two.result).toContain("two");
    expect(parentOf(first.pid as number)).toBe(process.pid);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/could not start.*from the gateway itself/);
    await broken.close();
  });
});

describe("when the host is SIGKILLed", () => {
  it("the spawner ends every agent's group, SIGTERM ignored or not, and exits", async () => {
    const built = join(RUDDER_SPAWNER, "..", "agent-spawner.js");
    const script = `
      const { AgentSpawner } = await import(${JSON.stringify(built)});
      const spawner = new AgentSpawner({ log: (line) => console.error(line), graceMs: 300 });
      const child = spawner.spawn(${JSON.stringify(STUBBORN)}, { cwd: undefined, env: { PATH: "/usr/bin:/bin" } });
      child.stdout.once("data", () => console.log(JSON.stringify({ spawner: spawner.pid, child: child.pid })));
      setInterval(() => {}, 1000);
    `;
    const host = startProcess(process.execPath, ["--input-type=module", "-e", script]);
    const [line] = await outputMatching(host, /\{.*\}/);
    const pids = JSON.parse(line) as { spawner: number; child: number };
    const descendants = await waitFor(() => {
      const found = listDescendants(pids.child);
      return found.length >= 2 && found;
    }, "the sleeps");
    host.kill("SIGKILL");
    const all = [pids.spawner, pids.child, ...descendants.map(({ pid }) => pid)];
    await waitFor(
      () => all.every((pid) => !isAlive(pid)),
      () => `every process gone; alive: ${all.filter(isAlive).join(", ")}`,
      10_000,
    );
  });
});
