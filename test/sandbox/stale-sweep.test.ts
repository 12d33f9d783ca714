/**
 * What a SIGKILLed agent leaves of its sandbox (the stand-ins in the
 * workspace, the private /tmp's host folder, its pids cgroup) is swept by
 * the next one, before its first sandboxed command.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ownPidsFolder } from "../../src/sandbox/pids-cgroup.js";
import { waitUntil } from "../agent/kernel-helpers.js";
import { killRudderGroup, type RudderRun, startRudder } from "../cli/rudder-process.js";
import { type FakeMessagesApi, startFakeMessagesApi } from "../fixtures/fake-messages-api.js";
import { processesMatching } from "../fixtures/process-scan.js";
import { NO_BUBBLEWRAP } from "./sandbox-helpers.js";

let api: FakeMessagesApi;
let root: string;
let workspace: string;
const runs: RudderRun[] = [];

beforeEach(async () => {
  api = await startFakeMessagesApi({ fallback: () => ({ text: "done" }) });
  root = realpathSync(mkdtempSync(join(tmpdir(), "rudder-sweep-")));
  workspace = join(root, "work");
  mkdirSync(workspace);
  mkdirSync(join(root, "home"));
});

afterEach(async () => {
  for (const run of runs.splice(0)) killRudderGroup(run);
  await api.close();
  rmSync(root, { recursive: true, force: true });
});

function rudder(args: string[]): RudderRun {
  const run = startRudder(args, {
    cwd: workspace,
    env: {
      PATH: process.env.PATH,
      HOME: join(root, "home"),
      TMPDIR: root,
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: "dummy",
      RUDDER_MAX_RETRIES: "0",
    },
  });
  runs.push(run);
  return run;
}

const STAND_INS = [".claude", ".mcp.json", ".rudder"];

describe.skipIf(NO_BUBBLEWRAP !== undefined)(
  `a SIGKILLed agent's sandbox ${NO_BUBBLEWRAP ?? ""}`,
  () => {
    it("is swept by the next agent: stand-ins, the private /tmp's folder, the cgroup", async () => {
      api.push({
        toolUse: [{ name: "bash", input: { command: "sleep 2.471 && echo x > /tmp/y" } }],
      });
      const killed = rudder(["run", "start it"]);
      await waitUntil(() => processesMatching("sleep 2.471").length > 0, 20_000);
      const pid = killed.child.pid as number;
      const mine = (name: string): boolean => name.startsWith(`rudder-sandbox-${pid}-`);
      const cgroups = ownPidsFolder();
      const cgroupsLeft = (): string[] =>
        cgroups === undefined ? [] : readdirSync(cgroups).filter(mine);
      const hadCgroup = cgroupsLeft().length > 0;
      killed.child.kill("SIGKILL");
      expect((await killed.exited).signal).toBe("SIGKILL");
      await waitUntil(() => processesMatching("sleep 2.471").length === 0, 10_000);
      // What it could not clean.
      expect(readdirSync(root).filter(mine)).toHaveLength(1);
      for (const name of STAND_INS) expect(existsSync(join(workspace, name)), name).toBe(true);

      api.push({ toolUse: [{ name: "bash", input: { command: "true" } }] });
      const next = rudder(["run", "again"]);
      expect((await next.exited).code).toBe(0);
      expect(readdirSync(root).filter(mine)).toEqual([]);
      expect(readdirSync(root).filter((name) => name.startsWith("rudder-sandbox-"))).toEqual([]);
      expect(readdirSync(workspace)).toEqual([]);
      if (hadCgroup) expect(cgroupsLeft()).toEqual([]);
    }, 60_000);
  },
);
