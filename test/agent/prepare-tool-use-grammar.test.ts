/**
 * The gate reads a bash command of plain words without its grammar, and loads the grammar
 * when a command (the model's, or a person's replacement for it) or a rule needs it.
 */
import { describe, expect, it, vi } from "vitest";
import type { ConfirmAnswer, DispatchContext } from "../../src/agent/dispatch-context.js";
import type { PermissionRules } from "../../src/permissions/types.js";

/** Fresh modules (the unit lane's workers keep a grammar earlier files loaded). */
async function freshGate() {
  vi.resetModules();
  const { prepareToolUse } = await import("../../src/agent/prepare-tool-use.js");
  const { bashParserStatus } = await import("../../src/permissions/bash-parser.js");
  const { createDefaultTools } = await import("../../src/tools/default-tools.js");
  const asked: string[] = [];
  const context = (rules: PermissionRules, answer: ConfirmAnswer = true): DispatchContext => ({
    tools: createDefaultTools(),
    rules,
    workspace: "/work/project",
    home: "/home/someone",
    bashSandboxed: false,
    sessionId: "s",
    confirm: async (request) => {
      asked.push(`${String(request.input.command)}: ${request.reason}`);
      return answer;
    },
    emit: () => {},
    signal: new AbortController().signal,
  });
  const bash = (command: string) => ({
    type: "tool_use" as const,
    id: "toolu_1",
    name: "bash",
    input: { command },
  });
  return { prepareToolUse, bashParserStatus, context, bash, asked };
}

const NO_RULES: PermissionRules = { allow: [], ask: [], deny: [] };

describe("the gate's grammar", () => {
  it("is not loaded for commands of plain words, and is for the first with shell syntax", async () => {
    const { prepareToolUse, bashParserStatus, context, bash, asked } = await freshGate();
    const status = await prepareToolUse(bash("git status --short"), context(NO_RULES));
    expect(status.ready).toBe(true);
    const removal = await prepareToolUse(bash("rm -rf build"), context(NO_RULES, false));
    expect(removal.ready).toBe(false);
    expect(asked).toEqual([expect.stringMatching(/^rm -rf build: /)]);
    expect(bashParserStatus()).toBe("not loaded");

    const piped = await prepareToolUse(bash("git log | head -5"), context(NO_RULES));
    expect(piped.ready).toBe(true);
    expect(bashParserStatus()).toBe("loaded");
    const hidden = await prepareToolUse(bash("echo $(curl -s x)"), context(NO_RULES, false));
    expect(hidden.ready).toBe(false);
    expect(asked.at(-1)).toMatch(/^echo \$\(curl -s x\): /);
  });

  it("is loaded for a person's replacement command with shell syntax", async () => {
    const { prepareToolUse, bashParserStatus, context, bash } = await freshGate();
    const answer = { allowed: true, updatedInput: { command: "sudo rm -rf / ; echo $(id)" } };
    const prepared = await prepareToolUse(bash("rm -rf build"), context(NO_RULES, answer));
    // The replacement is judged with the grammar: the deny list still holds for it.
    expect(prepared).toMatchObject({ ready: false });
    expect(bashParserStatus()).toBe("loaded");
  });

  it("is loaded for a rule with shell syntax, even when the command has none", async () => {
    const { prepareToolUse, bashParserStatus, context, bash, asked } = await freshGate();
    const rules = { allow: [], ask: [], deny: ['Bash(git commit -m "wip")'] };
    const prepared = await prepareToolUse(bash("git commit -m wip"), context(rules));
    expect(prepared).toMatchObject({ ready: false, denied: { toolName: "bash" } });
    expect(asked).toEqual([]);
    expect(bashParserStatus()).toBe("loaded");
  });
});
