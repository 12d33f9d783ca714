/**
 * bubblewrap dies with rudder even mid-start. SIGKILLed by its parent's death (its
 * die-with-parent) after it has armed that signal and before it has released its sandbox's
 * first process, bubblewrap leaves that process (pid 1 of the sandbox's namespace) waiting
 * forever for the release (bubblewrap issue #633): a probe or a sandbox starting when its owner
 * was killed left such processes on the machine. Here a real bubblewrap is held at that point
 * (`--userns-block-fd` on a descriptor nothing writes to: it blocks just there), its owner is
 * SIGKILLed alone, and no process of that bubblewrap may be left; nor when the owner is
 * SIGKILLed mid-command. The same for the data folder wrapper of `rudder serve --engine claude`
 * (src/cli/data-folder-wrapper.ts): its probe, and a wrapped agent mid-start and running.
 */

import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnDirect } from "../../src/claude-cli/spawn-direct.js";
import { dataFolderWrapper } from "../../src/cli/data-folder-wrapper.js";
import { findExecutable } from "../../src/sandbox/bubblewrap-probe.js";
import { fixturePath } from "../helpers/fixtures.js";
import { outputMatching, startProcess } from "../helpers/owned-process.js";
import { processesMatching } from "../helpers/process-scan.js";
import { type TempHome, tempHome } from "../helpers/temp-folders.js";
import { waitFor } from "../helpers/wait-for.js";
import { NO_BUBBLEWRAP } from "./sandbox-helpers.js";

let folders: TempHome;
let fifo: string;
const markers: string[] = [];

beforeAll(() => {
  folders = tempHome("rudder-bwrap-owned-");
  fifo = join(folders.root, "hold");
  spawnSync("mkfifo", [fifo]);
});

afterAll(() => {
  // Only if a test failed: what it left, found by its marker.
  for (const pid of markers.flatMap((marker) => processesMatching(marker))) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  folders.remove();
});

/**
 * How a marked `bwrap` runs: "held" once its parent-death signal is armed and before it
 * releases its sandbox's first process (--userns-block-fd needs the other two); "held-program"
 * so too, but a probe (its program `true`) runs through; "free": bubblewrap as it is.
 */
type Hold = "held" | "held-program" | "free";

/** A folder for PATH with a `bwrap` whose processes carry `marker` in their command line. */
function markedBubblewrap(marker: string, hold: Hold): string {
  const bin = join(folders.root, marker);
  mkdirSync(bin);
  const real = findExecutable("bwrap", process.env.PATH) ?? "bwrap";
  const free = `exec ${real} --setenv MARK ${marker} "$@"`;
  const held = `exec ${real} --unshare-user --info-fd 8 --userns-block-fd 9 --setenv MARK ${marker} "$@" 8>/dev/null 9<>${fifo}`;
  const script =
    hold === "free"
      ? free
      : hold === "held"
        ? held
        : `for last; do :; done\nif [ "$last" = true ]; then ${free}; fi\n${held}`;
  writeFileSync(join(bin, "bwrap"), `#!/bin/sh\n${script}\n`);
  chmodSync(join(bin, "bwrap"), 0o755);
  return bin;
}

/** `Name` and `PPid` of process `pid` (its /proc/<pid>/status), undefined once it is gone. */
function processStatus(pid: number): { name: string; parent: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const name = /^Name:\s*(.*)$/m.exec(status)?.[1] ?? "";
    return { name, parent: Number(/^PPid:\s*(\d+)$/m.exec(status)?.[1]) };
  } catch {
    return undefined;
  }
}

/** Whether one of `marked` is a bubblewrap started by another: the one a release would free. */
function hasHeldChild(marked: number[]): boolean {
  return marked.some((pid) => {
    const status = processStatus(pid);
    return (
      status?.name === "bwrap" &&
      marked.includes(status.parent) &&
      processStatus(status.parent)?.name === "bwrap"
    );
  });
}

/** The processes named `name` (their /proc/<pid>/status) whose command line holds `needle`. */
function namedMatching(name: string, needle: string): number[] {
  return processesMatching(needle).filter((pid) => processStatus(pid)?.name === name);
}

type OwnerMode = "probe" | "runner" | "command" | "wrapper-probe" | "wrapper-agent";

/**
 * Starts the owner (test/fixtures/sandbox-owner.mjs `mode`, running `program`), waits until
 * `running` holds for the bubblewrap processes (found by their marker), SIGKILLs the owner
 * alone, and resolves with the marker, which finds what is left of them.
 */
async function killOwnerWhen(
  mode: OwnerMode,
  running: (marked: number[]) => boolean,
  hold: Hold = mode === "command" ? "free" : "held",
  program = SLEEP,
): Promise<string> {
  const marker = `marked-${mode}-${markers.length}-${process.pid}-${folders.root.slice(-6)}`;
  markers.push(marker);
  const bin = markedBubblewrap(marker, hold);
  const owner = startProcess(
    process.execPath,
    [fixturePath("sandbox-owner.mjs"), mode, folders.workspace, folders.home, program],
    { env: { PATH: `${bin}:${process.env.PATH}`, HOME: folders.home, TMPDIR: folders.root } },
  );
  await outputMatching(owner, /started/);
  await waitFor(
    () => running(processesMatching(marker)),
    () => `bubblewrap to be running (${processesMatching(marker).length}): ${owner.stderr()}`,
  );
  owner.child.kill("SIGKILL");
  expect((await owner.exited).signal).toBe("SIGKILL");
  return marker;
}

/** The command run in the sandbox, found by its command line. */
const SLEEP = "sleep 97.531";
/** The program the data folder wrapper runs, as an agent. */
const AGENT = "sleep 97.532";

/** Waits until no process of `marker` and no `sleep` of `program` is left. */
async function allGone(marker: string, program = SLEEP, what = "the sandbox"): Promise<void> {
  await waitFor(
    () => processesMatching(marker).length === 0 && namedMatching("sleep", program).length === 0,
    () => `${what} to be gone: ${processesMatching(marker).join(" ")}`,
    5000,
  );
}

describe.skipIf(NO_BUBBLEWRAP !== undefined)(
  `bubblewrap's owner SIGKILLed ${NO_BUBBLEWRAP ?? ""}`,
  () => {
    it("mid-probe leaves no bubblewrap process", async () => {
      const marker = await killOwnerWhen("probe", (marked) => marked.length >= 2);
      await waitFor(
        () => processesMatching(marker).length === 0,
        () => `the probe's bubblewrap to be gone: ${processesMatching(marker).join(" ")}`,
        5000,
      );
    });

    it("while its sandbox starts leaves no bubblewrap process", async () => {
      const marker = await killOwnerWhen("runner", (marked) => marked.length >= 2);
      await waitFor(
        () => processesMatching(marker).length === 0,
        () => `the sandbox's bubblewrap to be gone: ${processesMatching(marker).join(" ")}`,
        5000,
      );
    });

    it("mid-command leaves no bubblewrap process and no command", async () => {
      const marker = await killOwnerWhen(
        "command",
        (marked) => marked.length >= 2 && processesMatching(SLEEP).length > 0,
      );
      await waitFor(
        () => processesMatching(marker).length === 0 && processesMatching(SLEEP).length === 0,
        () => `the sandbox to be gone: ${processesMatching(marker).join(" ")}`,
        5000,
      );
    });

    it("mid-probe of the data folder wrapper leaves no bubblewrap process", async () => {
      const marker = await killOwnerWhen("wrapper-probe", hasHeldChild);
      await allGone(marker, AGENT, "the wrapper's probe");
    });

    it("while a wrapped agent starts leaves no bubblewrap process", async () => {
      const marker = await killOwnerWhen("wrapper-agent", hasHeldChild, "held-program", AGENT);
      await allGone(marker, AGENT, "the wrapped agent's bubblewrap");
    });

    it("while a wrapped agent runs leaves no bubblewrap process and no agent", async () => {
      const marker = await killOwnerWhen(
        "wrapper-agent",
        (marked) => marked.length >= 2 && namedMatching("sleep", AGENT).length > 0,
        "free",
        AGENT,
      );
      await allGone(marker, AGENT, "the wrapped agent");
    });

    it("a wrapped agent's stop reaches the agent alone: the monitor ends with it", async () => {
      const hidden = join(folders.root, "hidden");
      mkdirSync(hidden);
      const wrapper = await dataFolderWrapper(hidden, process.env);
      if (wrapper.kind !== "wrapped") throw new Error(wrapper.reason);
      const agent = spawnDirect(
        [
          wrapper.bin,
          ...wrapper.args,
          "sh",
          "-c",
          "trap 'echo stopped; exit 3' TERM; echo ready; while :; do sleep 0.05; done",
        ],
        { cwd: folders.workspace, env: { PATH: process.env.PATH ?? "" }, owned: wrapper.owned },
      );
      let output = "";
      agent.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      const exited = new Promise((resolve) => agent.once("exit", (code) => resolve(code)));
      await waitFor(() => output.includes("ready"), "the agent to start");
      process.kill(-(agent.pid as number), "SIGTERM");
      expect(await exited).toBe(3);
      expect(output).toContain("stopped");
    });
  },
);
