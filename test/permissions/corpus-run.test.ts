import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DispatchContext, dispatchToolUse } from "../../src/agent/tool-dispatch.js";
import { loadBashParser } from "../../src/permissions/bash-parser.js";
import { evaluatePermission } from "../../src/permissions/evaluate.js";
import { emptyRules, type PermissionRules } from "../../src/permissions/types.js";
import { createBashTool } from "../../src/tools/bash-tool.js";
import { NO_BUBBLEWRAP, sandboxFixture } from "../sandbox/sandbox-helpers.js";
import { readCorpus } from "./corpus.js";

beforeAll(() => loadBashParser());

/**
 * The bypass corpus run for real through the dispatch path (gate, then the
 * bash tool), headless, without the sandbox, against a scratch folder outside
 * the workspace: what the gate lets through runs, and after each command the
 * scratch folder's canary must still be there. A folder under /var/tmp, as
 * the sandbox replaces /tmp with a private one.
 */
const workspace = realpathSync(mkdtempSync(join(tmpdir(), "rudder-corpus-workspace-")));
const scratchRoot = realpathSync(
  mkdtempSync(join(existsSync("/var/tmp") ? "/var/tmp" : tmpdir(), "rudder-corpus-scratch-")),
);
const scratch = join(scratchRoot, "target");
const canary = join(scratch, "canary");
const home = join(scratchRoot, "home");
afterAll(() => {
  rmSync(workspace, { recursive: true, force: true });
  rmSync(scratchRoot, { recursive: true, force: true });
});

function plantCanary(): void {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  writeFileSync(canary, "still here\n");
}

function context(rules: PermissionRules = emptyRules()): DispatchContext {
  return {
    tools: [createBashTool()],
    rules,
    workspace,
    home,
    bashSandboxed: false,
    sessionId: "corpus",
    emit: () => {},
    signal: AbortSignal.timeout(20_000),
  };
}

async function run(command: string, rules?: PermissionRules) {
  const block = { type: "tool_use" as const, id: "corpus", name: "bash", input: { command } };
  return dispatchToolUse(block, context(rules));
}

describe("the bypass corpus, run for real without the sandbox", () => {
  const entries = readCorpus("bypasses").map((entry) => ({
    ...entry,
    command: entry.command.replaceAll("SCRATCH", scratch),
  }));

  it("has the gate allow none of it", () => {
    const allowed = entries.filter(
      (entry) =>
        evaluatePermission("bash", { command: entry.command }, emptyRules(), workspace, {
          home,
          sandboxed: false,
        }).decision === "allow",
    );
    expect(allowed.map((entry) => entry.command)).toEqual([]);
  });

  it("runs none of it headless, and the canary outlives every command", async () => {
    const ran: string[] = [];
    for (const entry of entries) {
      plantCanary();
      const result = await run(entry.command);
      if (!String(result.content).startsWith("Permission denied")) ran.push(entry.command);
      expect(existsSync(canary), entry.command).toBe(true);
    }
    expect(ran).toEqual([]);
  }, 60_000);

  it("would notice harm: an allow rule lets rm run, and the canary is gone", async () => {
    plantCanary();
    const listed = await run(`ls ${scratch}`);
    expect(listed.content).toContain("canary");
    const removed = await run(`rm -rf ${scratch}`, { ...emptyRules(), allow: ["Bash(rm:*)"] });
    expect(removed.is_error).not.toBe(true);
    expect(existsSync(canary)).toBe(false);
  });
});

/**
 * The same corpus in the real sandbox (bubblewrap), as `rudder run` sets it up:
 * the gate lets everything but the deny list run, so every such command runs,
 * against a scratch folder outside the workspace and outside /tmp (which the
 * sandbox replaces), and the canary outlives each one. Here every sixth line and
 * the deny list's; `npm run redteam` runs every line (attacks/bypass-corpus.ts).
 */
describe.skipIf(NO_BUBBLEWRAP !== undefined)(
  "the bypass corpus, run for real in the sandbox",
  () => {
    const fixture = sandboxFixture();
    afterAll(() => fixture.cleanup());
    const target = join(fixture.outside, "target");
    const sandboxCanary = join(target, "canary");
    const entries = readCorpus("bypasses")
      .filter((entry, index) => index % 6 === 0 || entry.on === "deny")
      .map((entry) => ({ ...entry, command: entry.command.replaceAll("SCRATCH", target) }));
    const sandboxContext = (): DispatchContext => ({
      tools: [createBashTool({ sandbox: fixture.sandbox })],
      rules: emptyRules(),
      workspace: fixture.workspace,
      home: fixture.home,
      bashSandboxed: (command) => fixture.sandbox.confines(command),
      sessionId: "corpus-sandbox",
      emit: () => {},
      signal: AbortSignal.timeout(120_000),
    });

    it("runs all of a sample but the deny list, and the canary outlives every command", async () => {
      const ran: string[] = [];
      for (const entry of entries) {
        rmSync(target, { recursive: true, force: true });
        mkdirSync(target, { recursive: true });
        writeFileSync(sandboxCanary, "still here\n");
        const block = {
          type: "tool_use" as const,
          id: "corpus",
          name: "bash",
          input: { command: entry.command, timeout: 10_000 },
        };
        const result = await dispatchToolUse(block, sandboxContext());
        const denied = String(result.content).startsWith("Permission denied");
        expect(denied, entry.command).toBe(entry.on === "deny");
        expect(String(result.content), entry.command).not.toContain("sandbox cannot start");
        if (!denied) ran.push(entry.command);
        expect(existsSync(sandboxCanary), entry.command).toBe(true);
      }
      expect(ran.length).toBe(entries.filter((entry) => entry.on === "allow").length);
      expect(ran.length).toBeGreaterThan(25);
    }, 120_000);
  },
);
