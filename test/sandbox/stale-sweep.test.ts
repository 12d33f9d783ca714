/**
 * What a SIGKILLed agent leaves of its sandbox (the stand-ins in the
 * fixture.workspace, the private /tmp's host folder, its pids cgroup) is swept by
 * the next one, before its first sandboxed command.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ownPidsFolder } from "../../src/sandbox/pids-cgroup.js";
import { processesMatching } from "../helpers/process-scan.js";
import { waitFor } from "../helpers/wait-for.js";
import { rudderFixture } from "./rudder-fixture.js";
import { NO_BUBBLEWRAP } from "./sandbox-helpers.js";

const fixture = rudderFixture("rudder-sweep-");
const { rudder } = fixture;

const STAND_INS = [".claude", ".mcp.json", ".rudder"];

describe.skipIf(NO_BUBBLEWRAP !== undefined)(
  `a SIGKILLed agent's sandbox ${NO_BUBBLEWRAP ?? ""}`,
  () => {
    it("is swept by the next agent: stand-ins, the private /tmp's folder, the cgroup", async () => {
      fixture.api.push({
        toolUse: [{ name: "bash", input: { command: "sleep 2.471 && echo x > /tmp/y" } }],
      });
      const killed = rudder(["run", "start it"]);
      await waitFor(
        () => processesMatching("sleep 2.471").length > 0,
        "the sleep to start",
        20_000,
      );
      const pid = killed.child.pid as number;
      const mine = (name: string): boolean => name.startsWith(`rudder-sandbox-${pid}-`);
      const cgroups = ownPidsFolder();
      const cgroupsLeft = (): string[] =>
        cgroups === undefined ? [] : readdirSync(cgroups).filter(mine);
      const hadCgroup = cgroupsLeft().length > 0;
      killed.child.kill("SIGKILL");
      expect((await killed.exited).signal).toBe("SIGKILL");
      await waitFor(
        () => processesMatching("sleep 2.471").length === 0,
        "the sleep to be gone",
        10_000,
      );
      // What it could not clean.
      expect(readdirSync(fixture.root).filter(mine)).toHaveLength(1);
      for (const name of STAND_INS)
        expect(existsSync(join(fixture.workspace, name)), name).toBe(true);

      fixture.api.push({ toolUse: [{ name: "bash", input: { command: "true" } }] });
      const next = rudder(["run", "again"]);
      expect((await next.exited).code).toBe(0);
      expect(readdirSync(fixture.root).filter(mine)).toEqual([]);
      expect(
        readdirSync(fixture.root).filter((name) => name.startsWith("rudder-sandbox-")),
      ).toEqual([]);
      expect(readdirSync(fixture.workspace)).toEqual([]);
      if (hadCgroup) expect(cgroupsLeft()).toEqual([]);
    }, 60_000);
  },
);
