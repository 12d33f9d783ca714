/**
 * bubblewrap dies with rudder even mid-start. SIGKILLed by its parent's death (its
 * die-with-parent) after it has armed that signal and before it has released its sandbox's
 * first process, bubblewrap leaves that process (pid 1 of the sandbox's namespace) waiting
 * forever for the release (bubblewrap issue #633): a probe or a sandbox starting when its owner
 * was killed left such processes on the machine. Here a real bubblewrap is held at that point
 * (`--userns-block-fd` on a descriptor nothing writes to: it blocks just there), its owner is
 * SIGKILLed alone, and no process of that bubblewrap may be left; nor when the owner is
 * SIGKILLed mid-command.
 */

import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
 * A folder for PATH with a `bwrap` whose processes carry `marker` in their command line. `held`:
 * bubblewrap held once its parent-death signal is armed and before it releases its sandbox's
 * first process (--userns-block-fd needs the other two); else bubblewrap as it is.
 */
function markedBubblewrap(marker: string, held: boolean): string {
  const bin = join(folders.root, marker);
  mkdirSync(bin);
  const real = findExecutable("bwrap", process.env.PATH) ?? "bwrap";
  const hold = held ? "--unshare-user --info-fd 8 --userns-block-fd 9 " : "";
  const descriptors = held ? ` 8>/dev/null 9<>${fifo}` : "";
  writeFileSync(
    join(bin, "bwrap"),
    `#!/bin/sh\nexec ${real} ${hold}--setenv MARK ${marker} "$@"${descriptors}\n`,
  );
  chmodSync(join(bin, "bwrap"), 0o755);
  return bin;
}

/**
 * Starts the owner (test/fixtures/sandbox-owner.mjs `mode`), waits until `running` holds for
 * the bubblewrap processes (found by their marker), SIGKILLs the owner alone, and resolves with
 * the marker, which finds what is left of them.
 */
async function killOwnerWhen(
  mode: "probe" | "runner" | "command",
  running: (marked: number[]) => boolean,
): Promise<string> {
  const marker = `marked-${mode}-${process.pid}-${folders.root.slice(-6)}`;
  markers.push(marker);
  const bin = markedBubblewrap(marker, mode !== "command");
  const owner = startProcess(
    process.execPath,
    [fixturePath("sandbox-owner.mjs"), mode, folders.workspace, folders.home, SLEEP],
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
  },
);
